"""A sandboxed trial's limits: setrlimit through prlimit(1) inside the sandbox, and a pids cgroup.

memory_mb is RLIMIT_AS (address space, per process), cpu_seconds RLIMIT_CPU (per process),
max_file_mb RLIMIT_FSIZE (a write past it fails with EFBIG, the process gets SIGXFSZ).
max_processes is RLIMIT_NPROC, which the kernel counts per user: inside the sandbox's own user
namespace that is the sandbox's processes (Linux >= 5.14), but root is exempt from it. So when
engine runs as root and a pids cgroup can be made (cgroup v1 `pids`, or a writable v2 cgroup with
the pids controller) the trial also runs in one whose pids.max is the limit. (Only for root: moving
a process into a cgroup costs milliseconds per trial.) As root without one, the limit does not hold:
preflight says so.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import signal
import uuid
from pathlib import Path

import trio

from engine.events.sandbox import SandboxLimits

MB = 1 << 20


def prlimit_prefix(limits: SandboxLimits) -> list[str]:
    """prlimit's arguments that set the limits before exec'ing the command (none: no prefix)."""
    options = []
    if limits.memory_mb is not None:
        options.append(f"--as={limits.memory_mb * MB}")
    if limits.cpu_seconds is not None:
        options.append(f"--cpu={limits.cpu_seconds}")
    if limits.max_processes is not None:
        options.append(f"--nproc={limits.max_processes}")
    if limits.max_file_mb is not None:
        options.append(f"--fsize={limits.max_file_mb * MB}")
    return ["prlimit", *options, "--"] if options else []


def nproc_exempt() -> bool:
    """Root is exempt from RLIMIT_NPROC: max_processes needs a pids cgroup then."""
    return os.geteuid() == 0


@functools.cache
def pids_root() -> Path | None:
    """A cgroup under which engine may make a pids cgroup per trial, or None (RLIMIT_NPROC alone)."""
    if not nproc_exempt():
        return None
    for candidate in _candidates():
        probe = candidate / f"engine-probe-{uuid.uuid4().hex[:8]}"
        try:
            probe.mkdir()
        except OSError:
            continue
        usable = (probe / "pids.max").exists()
        probe.rmdir()
        if usable:
            return candidate
    return None


def _candidates() -> list[Path]:
    """This process's own cgroup in the v1 pids hierarchy and in the v2 one."""
    found = []
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return []
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "pids" in controllers.split(","):
            found.append(Path("/sys/fs/cgroup/pids") / path.lstrip("/"))
        elif controllers == "":
            found.append(Path("/sys/fs/cgroup") / path.lstrip("/"))
    return found


class PidsCgroup:
    """One trial's pids cgroup: made before the sandbox starts, removed once it is gone."""

    def __init__(self, root: Path, max_processes: int) -> None:
        self.path = root / f"engine-trial-{uuid.uuid4().hex}"
        self.path.mkdir()
        (self.path / "pids.max").write_text(str(max_processes))

    def enter_argv(self, argv: list[str]) -> list[str]:
        """argv started from a shell that first moves itself into the cgroup (its children follow)."""
        enter = f'echo $$ > {self.path}/cgroup.procs && exec "$@"'
        return [shutil.which("sh") or "/bin/sh", "-c", enter, "sh", *argv]

    async def remove(self) -> None:
        """Kill what is left in it (the sandbox's processes are still being torn down), then remove it.
        A cgroup v1 folder is never removed by itself: one left behind would stay until reboot."""
        for _ in range(REMOVE_TRIES):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:  # EBUSY: processes still in it
                for pid in (self.path / "cgroup.procs").read_text().split():
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(int(pid), signal.SIGKILL)
                await trio.sleep(REMOVE_PAUSE_S)


REMOVE_TRIES = 200  # x REMOVE_PAUSE_S: two seconds for killed processes to be gone (bounded)
REMOVE_PAUSE_S = 0.01
