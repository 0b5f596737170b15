"""The bubblewrap command line that runs one trial's process in its own sandbox.

The host's system is mounted read-only; every home folder, the folders where the host's services
keep their Unix sockets (/run, /var/run, and /var/tmp; a socket stays connectable on a read-only
mount) and the stores engine was told to hide are covered by an empty tmpfs, each other socket the
host has bound by an empty file (`host_sockets`); the only writable folders are the trial's own (its
workspace and scratch) and a private /tmp. `--unshare-all` gives the sandbox its own user, PID, IPC,
UTS, cgroup and network namespaces (the network is given back with `--share-net` for `network =
"host"`); `--die-with-parent` and the PID namespace make every process the agent started die with
the trial.

The sandbox's environment is bwrap's own (the process is started with exactly `sandbox_env`), never
`--setenv NAME VALUE`: a value on a command line is readable in /proc/PID/cmdline by every process
of the user, and a secret handed to the agent must not be. Files beside the experiment that hold a
person's secrets (`.env`, `.netrc`...) are covered with an empty file in the folder shown to it.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from engine.actors.sandbox.host_sockets import visible_host_sockets
from engine.events.sandbox import SandboxPolicy

BWRAP = "bwrap"
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"
# a person's secrets kept beside a project: shown as empty files where the experiment's folder is shown
SECRET_FILES = (".env", ".netrc", ".npmrc", ".pypirc", ".git-credentials")
SHOWN_UNDER_RUN = ("/run/systemd/resolve",)  # systemd-resolved's resolv.conf (no socket in it)
_HIDDEN: set[Path] = set()  # stores (and other folders) no sandbox may see, added by the run


def hide_from_sandboxes(path: Path) -> None:
    """A folder every sandbox started after this covers with an empty tmpfs (a run's store)."""
    _HIDDEN.add(path.resolve())


def home_folders() -> list[Path]:
    homes = [Path("/home"), Path("/root"), Path(os.path.expanduser("~"))]
    return sorted({p.resolve() for p in homes if p.is_dir()})


def socket_folders() -> list[Path]:
    """Where the host keeps its services' Unix sockets and a person's shared scratch files: /run (the
    user's session bus, ssh and gpg agents, docker.sock, a database's socket), /var/run where it is
    a folder of its own, and /var/tmp. The network namespace closes TCP, not a socket file: an agent
    that can connect to the session bus can start any command outside the sandbox."""
    found = [Path("/run"), Path("/var/tmp")]
    if not Path("/var/run").is_symlink():
        found.append(Path("/var/run"))
    return [folder.resolve() for folder in found if folder.is_dir()]


def hidden_stores() -> list[Path]:
    return sorted(p for p in _HIDDEN if p.is_dir())


def visible_in_sandbox(path: Path, base_dir: Path | None) -> bool:
    """Whether a file is there inside a sandbox: not under a home folder or a covered socket folder,
    unless under a folder shown again (the experiment's, engine's Python)."""
    real = path.resolve()
    shown = [*runtime_folders(), *([base_dir.resolve()] if base_dir is not None else [])]
    if any(real.is_relative_to(folder) for folder in shown):
        return True
    return not any(real.is_relative_to(folder) for folder in (*home_folders(), *socket_folders()))


def runtime_folders() -> list[Path]:
    """The Python engine runs on (a sandbox's helpers run on it too): visible read-only even when it is
    installed under a hidden home (pyenv, a user's venv)."""
    return sorted({Path(p).resolve() for p in (sys.base_prefix, sys.prefix)})


def sandbox_env(policy: SandboxPolicy, named: Mapping[str, str], workdir: Path) -> dict[str, str]:
    """Only what the spec names: its `env` and ENGINE_* variables (`named`), the host variables listed in
    `pass_env`, and a PATH, HOME (the workspace) and TMPDIR of the sandbox's own."""
    env = {"PATH": SANDBOX_PATH, "HOME": str(workdir), "TMPDIR": "/tmp", "LANG": "C.UTF-8"}
    env.update({name: os.environ[name] for name in policy.pass_env if name in os.environ})
    env.update(named)
    return env


def bwrap_argv(
    policy: SandboxPolicy,
    argv: list[str],
    *,
    workdir: Path,
    writable: Iterable[Path],
    readable: Iterable[Path] = (),
) -> list[str]:
    """bwrap's arguments around argv (already wrapped in its limits); started with `sandbox_env` as
    its environment, which it hands on (no --clearenv: that would drop it)."""
    out = [shutil.which(BWRAP) or BWRAP, "--die-with-parent", "--unshare-all", "--new-session"]
    if policy.network == "host":
        out.append("--share-net")
    out += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    sockets, homes, stores = socket_folders(), home_folders(), hidden_stores()
    for folder in sockets:  # a Unix socket stays connectable on a read-only mount
        out += ["--tmpfs", str(folder)]
    for folder in SHOWN_UNDER_RUN:  # the resolver's file, where /etc/resolv.conf links into /run
        out += ["--ro-bind-try", folder, folder]
    for folder in homes:
        out += ["--tmpfs", str(folder)]
    readable, writable, runtime = list(readable), list(writable), runtime_folders()
    for folder in (*runtime, *readable):  # under a home: shown again, read-only
        out += ["--ro-bind-try", str(folder), str(folder)]
    for folder in stores:  # after: a store inside the experiment's folder stays hidden
        out += ["--tmpfs", str(folder)]
    for folder in {Path(workdir), *writable}:
        out += ["--bind", str(folder), str(folder)]
    for secret in secret_files(readable):  # last: a workspace that is the experiment's folder too
        out += ["--dev-bind", "/dev/null", str(secret)]  # reads as empty (a plain bind is nodev)
    shown = [Path(f).resolve() for f in (*runtime, *readable, workdir, *writable)]
    for socket in visible_host_sockets([Path("/tmp"), *sockets, *homes, *stores], shown):
        out += ["--ro-bind", "/dev/null", str(socket)]  # the host's other sockets: connecting finds none
    out += ["--chdir", str(workdir)]
    return [*out, "--", *argv]


def secret_files(folders: Iterable[Path]) -> list[Path]:
    """The secrets files (`.env`, `.env.local`, `.netrc`...) directly in the folders shown to a sandbox."""
    found = []
    for folder in folders:
        if folder.is_dir():
            for path in folder.iterdir():
                if path.name in SECRET_FILES or path.name.startswith(".env."):
                    found.append(path)
    return sorted(found)
