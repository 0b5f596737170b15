"""What engine starts of Ray, it stops: even when engine itself is killed (kill -9).

A local Ray instance (no `address`) is started by `ray.init` as children of the engine process.
Ray stops its servers with their parent, but its agents (dashboard, runtime_env) notice late and
then wait minutes on the dead cluster before they exit. So, once Ray is up, engine hands the ids of
the processes it started to a reaper: a small process in its own session that waits for the end
of a pipe only engine holds. The pipe ends when engine disconnects, or when it dies however it
dies; the reaper then kills whatever of those processes is left (each checked by its start time,
so a reused id is never hit). Linux only (/proc); elsewhere Ray's own clean-up is all there is.

    python -m engine.runtime.ray_reaper PID:START...   (stdin: the pipe)
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from pathlib import Path

PROC = Path("/proc")


def start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (field 22 of /proc/PID/stat), or None."""
    try:
        stat = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])


def alive(pid: int, started: int) -> bool:
    """The same process (by its start time) is still running: neither gone nor a zombie."""
    try:
        fields = (PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[0] not in ("Z", "X") and int(fields[19]) == started


def _parent(pid: int) -> int | None:
    try:
        return int((PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def descendants(root: int) -> list[int]:
    """Every live process below root (children, their children...)."""
    if not PROC.is_dir():
        return []
    children: dict[int, list[int]] = {}
    for entry in PROC.iterdir():
        if entry.name.isdigit():
            parent = _parent(int(entry.name))
            if parent is not None:
                children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def ray_processes(root: int) -> list[int]:
    """The processes below root that Ray started (its binaries, its Python modules, `ray::` titles)."""
    found = []
    for pid in descendants(root):
        try:
            cmdline = (PROC / str(pid) / "cmdline").read_bytes()
        except OSError:
            continue
        if b"ray" in cmdline:
            found.append(pid)
    return found


GRACE_S = 10.0  # a hang guard: SIGKILL ends a process at once, unless the kernel is stuck on its I/O


def kill_started(pids: list[tuple[int, int]]) -> None:
    """SIGKILL each (pid, start time) still alive (the cluster they made up is gone already), and
    wait for each to end (a pidfd turns readable then), so nothing of them is left on return."""
    waits = []
    for pid, started in pids:
        if not alive(pid, started):
            continue
        try:
            fd = os.pidfd_open(pid)
        except OSError:
            continue
        if alive(pid, started):  # (the fd is of this process: the id was not reused in between)
            try:
                signal.pidfd_send_signal(fd, signal.SIGKILL)
                waits.append(fd)
                continue
            except OSError:
                pass
        os.close(fd)
    for fd in waits:
        select.select([fd], [], [], GRACE_S)
        os.close(fd)


def marked(pids: list[int]) -> list[tuple[int, int]]:
    return [(pid, started) for pid in pids if (started := start_time(pid)) is not None]


def start_reaper(pids: list[int]) -> subprocess.Popen[bytes] | None:
    """A reaper for these processes: close its stdin (or die) and it kills what is left of them."""
    if not PROC.is_dir() or not pids:
        return None
    args = [f"{pid}:{started}" for pid, started in marked(pids)]
    return subprocess.Popen(
        [sys.executable, "-m", "engine.runtime.ray_reaper", *args], stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip


def stop_reaper(reaper: subprocess.Popen[bytes] | None) -> None:
    """engine disconnected: the reaper clears what Ray left and exits."""
    if reaper is not None and reaper.stdin is not None:
        reaper.stdin.close()
        reaper.wait()


def main(argv: list[str]) -> None:
    pids = [(int(pid), int(started)) for pid, started in (arg.split(":") for arg in argv)]
    sys.stdin.buffer.read()  # returns at the pipe's end: engine closed it, or engine is gone
    kill_started(pids)


if __name__ == "__main__":
    main(sys.argv[1:])
