"""Can a sandbox start on this machine? One line saying why not, naming what to install.

Asked by preflight (`engine validate`, `engine run`, a Ray worker before its first trial), so a
sandboxed experiment on a machine without bubblewrap is refused before anything runs: never run
unsandboxed instead.
"""

from __future__ import annotations

import functools
import shutil
import subprocess

from engine.actors.sandbox.bwrap import BWRAP

INSTALL = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)"


@functools.cache
def bwrap_problem() -> str | None:
    """None when bubblewrap is installed and may create namespaces here; else why not, in one line."""
    if shutil.which(BWRAP) is None:
        return f"bubblewrap (bwrap) is not installed: {INSTALL}"
    if shutil.which("prlimit") is None:
        return "prlimit is not installed (it sets the sandbox's limits): install util-linux"
    probe = [BWRAP, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "true"]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap could not start a sandbox ({exc})"
    if done.returncode != 0:
        why = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no message"]
        return (f"bubblewrap cannot create namespaces here ({why[0]}): allow unprivileged user namespaces "
                "(sysctl kernel.unprivileged_userns_clone=1, or the AppArmor rule for bwrap)")  # fmt: skip
    return None


@functools.cache
def docker_problem() -> str | None:
    """Why the docker sandbox cannot run here (no client, no daemon answering), or None."""
    if shutil.which("docker") is None:
        return 'the docker client is not installed; use sandbox = "bubblewrap"'
    try:
        done = subprocess.run(["docker", "info", "--format", "{{.ServerVersion}}"], capture_output=True,
                              timeout=10, check=False)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        done = None
    if done is None or done.returncode != 0:
        return 'no Docker daemon answers here (docker info failed); use sandbox = "bubblewrap"'
    return 'the docker sandbox is not built yet (a daemon answers); use sandbox = "bubblewrap"'


def sandbox_problem(kind: str) -> str | None:
    """Why a sandbox of this kind cannot start here, or None ("none" always can)."""
    if kind == "bubblewrap":
        return bwrap_problem()
    if kind == "docker":
        return docker_problem()
    return None


def sandbox_problem_on_worker(kind: str) -> str | None:
    """A Ray task: why the sandbox cannot start on the worker running it ("host: why"), or None."""
    import socket

    problem = sandbox_problem(kind)
    return None if problem is None else f"{socket.gethostname()}: {problem}"
