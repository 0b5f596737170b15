"""Subprocesses in their own process group: run, drain, and kill the whole group.

Shared by the command target and the command verifier grader. A timeout or a
cancelled run kills the whole group (the agent's tools and servers included),
not just the direct child.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import msgspec
import trio

from engine.actors.targets.target_protocol import TargetError

MAX_OUTPUT = 1 << 20
STDERR_TAIL = 64 << 10
KILL_GRACE_S = 2.0
# a daemon that left the group may hold our pipes open after the agent exited: don't wait on it
DRAIN_GRACE_S = 1.0


class ProcessResult(msgspec.Struct, kw_only=True):
    exit_code: int | None
    stdout: bytes
    stderr: bytes
    timed_out: bool = False

    def stderr_tail(self, lines: int = 20) -> str:
        return "\n".join(self.stderr.decode("utf-8", "replace").splitlines()[-lines:])


async def run_group(
    argv: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    timeout_s: float,
    stdin: bytes | None = None,
    pass_fds: tuple[int, ...] = (),
) -> ProcessResult:
    """Run argv in a new session; on timeout or cancellation the whole group is killed and reaped.
    `pass_fds`: descriptors the process inherits (a sandbox's boot helper reports through one)."""
    try:
        proc = await trio.lowlevel.open_process(
            argv, stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, cwd=cwd, env=env, start_new_session=True, pass_fds=pass_fds,
        )  # fmt: skip
    except OSError as exc:
        raise TargetError("config", f"cannot start {argv[0]!r}: {exc}") from exc
    out, err = bytearray(), bytearray()
    try:
        with trio.move_on_after(timeout_s) as deadline:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_drain, proc.stdout, out, MAX_OUTPUT, False)
                nursery.start_soon(_drain, proc.stderr, err, STDERR_TAIL, True)
                if stdin is not None:
                    nursery.start_soon(_feed, proc.stdin, stdin)
                await proc.wait()
                # the agent is done: what it left running in its group goes too (per-trial isolation)
                await kill_group(proc)
                nursery.cancel_scope.deadline = min(
                    nursery.cancel_scope.deadline, trio.current_time() + DRAIN_GRACE_S
                )
    finally:
        with trio.CancelScope(shield=True):
            await kill_group(proc)
    timed_out = deadline.cancelled_caught
    return ProcessResult(
        exit_code=None if timed_out else proc.returncode,
        stdout=bytes(out),
        stderr=bytes(err),
        timed_out=timed_out,
    )


async def kill_group(proc: trio.Process, grace_s: float | None = None) -> None:
    """SIGTERM the group, give the leader a grace period, SIGKILL whatever is left, reap the leader."""
    # start_new_session: the child leads its own group, so its pid is the group id
    if _signal_group(proc.pid, signal.SIGTERM):
        with trio.move_on_after(KILL_GRACE_S if grace_s is None else grace_s):
            await proc.wait()
        _signal_group(proc.pid, signal.SIGKILL)
    await proc.wait()


def _signal_group(pgid: int, sig: int) -> bool:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


async def _drain(stream: trio.abc.ReceiveStream | None, into: bytearray, cap: int, tail: bool) -> None:
    """Read to EOF (a child must never block on a full pipe), keeping the first or last `cap` bytes."""
    assert stream is not None
    async with stream:
        async for chunk in stream:
            if tail:
                into += chunk
                del into[:-cap]
            elif len(into) < cap:
                into += chunk[: cap - len(into)]


async def _feed(stream: trio.abc.SendStream | None, data: bytes) -> None:
    assert stream is not None
    async with stream:
        try:
            await stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # the agent exited or closed stdin without reading it all: its choice


async def run_setup(commands: list[str], workdir: Path, env: dict[str, str], timeout_s: float) -> None:
    """Run each shell command in order in workdir; the first failure is a config error naming it."""
    for command in commands:
        done = await run_group(["/bin/sh", "-c", command], cwd=workdir, env=env, timeout_s=timeout_s)
        check_setup(command, done, timeout_s)


def check_setup(command: str, done: ProcessResult, timeout_s: float) -> None:
    """A setup command that timed out or failed is a config error naming it."""
    if done.timed_out:
        raise TargetError("config", f"setup command {command!r} timed out after {timeout_s}s")
    if done.exit_code != 0:
        raise TargetError(
            "config", f"setup command {command!r} exited with {done.exit_code}:\n{done.stderr_tail()}"
        )
