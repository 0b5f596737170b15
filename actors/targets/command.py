"""An agent CLI as the target: one real subprocess per trial (seed 003's agent experiments).

Each trial runs in its own session, so a timeout or a cancelled run kills the
whole process group (the agent's tools and servers included), not just the
direct child. Variant flags and params reach the agent as ENGINE_FLAG_* /
ENGINE_PARAM_* environment variables.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import msgspec
import trio

from actors.targets.base import TargetError, TargetRequest, TargetResponse
from events.spec import TargetSpec

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
    argv: list[str], *, cwd: Path, env: dict[str, str], timeout_s: float, stdin: bytes | None = None
) -> ProcessResult:
    """Run argv in a new session; on timeout or cancellation the whole group is killed and reaped."""
    try:
        proc = await trio.lowlevel.open_process(
            argv, stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, cwd=cwd, env=env, start_new_session=True,
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
        if done.timed_out:
            raise TargetError("config", f"setup command {command!r} timed out after {timeout_s}s")
        if done.exit_code != 0:
            raise TargetError(
                "config", f"setup command {command!r} exited with {done.exit_code}:\n{done.stderr_tail()}"
            )


class CommandTarget:
    def __init__(self, spec: TargetSpec) -> None:
        self.spec = spec

    async def call(self, request: TargetRequest) -> TargetResponse:
        argv, stdin = build_argv(self.spec, request)
        env = trial_env(self.spec, request)
        fresh = self.spec.workdir is None
        workdir = Path(tempfile.mkdtemp(prefix="engine-trial-")) if fresh else Path(self.spec.workdir or ".")
        try:
            if fresh:  # a shared workdir would see every trial's setup at once
                await run_setup(request.variant.setup, workdir, env, request.timeout_s)
            done = await run_group(argv, cwd=workdir, env=env, timeout_s=request.timeout_s, stdin=stdin)
        finally:
            if fresh:
                with trio.CancelScope(shield=True):
                    await trio.to_thread.run_sync(shutil.rmtree, workdir, True)
        if done.timed_out:
            raise TargetError(
                "timeout", f"{self.spec.command!r:.200} timed out after {request.timeout_s}s", retryable=False
            )
        if done.exit_code == 127 and isinstance(
            self.spec.command, str
        ):  # the shell could not find the agent executable
            raise TargetError("config", f"command not found (exit 127):\n{done.stderr_tail()}")
        text = done.stdout.decode("utf-8", errors="replace")
        return TargetResponse(
            text=text,
            tokens_in=len(request.prompt.split()),
            tokens_out=len(text.split()),
            exit_code=done.exit_code,
        )

    async def aclose(self) -> None:
        return None


def build_argv(spec: TargetSpec, request: TargetRequest) -> tuple[list[str], bytes | None]:
    """The argv to run and the bytes for its stdin, per spec.prompt_via."""
    command, via = spec.command, spec.prompt_via
    if not command:
        raise TargetError("config", "command target: `command` is not set")
    values = {
        "prompt": request.prompt, "model": request.model or "", "system": request.system or "",
        "case_id": request.case.id, "variant": request.variant.name,
    }  # fmt: skip
    if isinstance(command, str):
        if via == "template":  # shell-quoted, so write {prompt} unquoted in the command string
            command = _fill(command, {name: shlex.quote(value) for name, value in values.items()})
        elif via == "arg":
            command = f"{command} {shlex.quote(request.prompt)}"
        argv = ["/bin/sh", "-c", command]
    elif via == "template":
        argv = [_fill(part, values) for part in command]
    else:
        argv = [*command, request.prompt] if via == "arg" else list(command)
    return argv, request.prompt.encode() if via == "stdin" else None


def _fill(text: str, values: dict[str, str]) -> str:
    # plain replacement, not str.format: agent arguments often contain JSON braces
    for name, value in values.items():
        text = text.replace("{" + name + "}", value)
    return text


def trial_env(spec: TargetSpec, request: TargetRequest) -> dict[str, str]:
    env = {**os.environ, **spec.env}
    env.update(
        ENGINE_VARIANT=request.variant.name, ENGINE_CASE_ID=request.case.id,
        ENGINE_REPEAT=str(request.repeat), ENGINE_SEED=str(request.seed),
        ENGINE_MODEL=request.model or "", ENGINE_SYSTEM=request.system or "",
    )  # fmt: skip
    for prefix, values in (("ENGINE_FLAG_", request.flags), ("ENGINE_PARAM_", request.params)):
        for name, value in values.items():
            env[prefix + env_name(name)] = env_value(value)
    return env


def env_name(name: str) -> str:
    """A flag name as a portable environment variable suffix ("max-retries" -> "MAX_RETRIES")."""
    return re.sub(r"\W", "_", name).upper()


def env_value(value: Any) -> str:
    return value if isinstance(value, str) else msgspec.json.encode(value).decode()
