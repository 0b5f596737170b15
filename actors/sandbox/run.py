"""Run one process in a trial's sandbox: limits, services and host ports around it, then bwrap.

Without services or host ports the agent runs straight under prlimit inside bwrap (the cheap
path); with them a small helper (boot.py) runs first inside the same sandbox. The services'
output comes back as text beside the agent's stderr; a service that was not ready in time is a
TargetError of class `sandbox`, never the agent's failure.

The helper says how the boot went through a pipe only it holds ("booted", or "failed: why"), closed
before the agent starts: the agent shares the helper's folders, so a marker file there is something
it could write, and a sandbox error is then the agent's to fake. Without "booted" the agent never
started: a timeout then is the services', not the agent's.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import msgspec
import trio

from engine.actors.process import ProcessResult, run_group
from engine.actors.sandbox.bwrap import bwrap_argv, sandbox_env
from engine.actors.sandbox.limits import PidsCgroup, pids_root, prlimit_prefix
from engine.actors.sandbox.probe import sandbox_problem
from engine.actors.sandbox.relay import serve_host_ports
from engine.actors.sandbox.services import BOOT, SharedServices, service_logs, service_plans
from engine.actors.targets.target_protocol import TargetError
from engine.events.sandbox import SandboxPolicy


@dataclass
class SandboxRun:
    """What a sandboxed process left: its result, and its services' output by name."""

    result: ProcessResult
    service_logs: dict[str, str]


async def run_sandboxed(
    policy: SandboxPolicy,
    argv: list[str],
    *,
    cwd: Path,
    named_env: Mapping[str, str],
    timeout_s: float,
    stdin: bytes | None = None,
    writable: Iterable[Path] = (),
    readable: Iterable[Path] = (),
    shared: SharedServices | None = None,
) -> SandboxRun:
    """argv in the policy's sandbox; `shared`: the services of its shared workspace, reached through
    their sockets (their TCP ports on the sandbox's own loopback)."""
    problem = sandbox_problem(policy.kind)
    if problem is not None:
        raise TargetError("infra", f"sandbox {policy.kind!r} cannot start: {problem}", error_class="sandbox")
    inner = [*prlimit_prefix(policy.limits), *argv]
    env = sandbox_env(policy, named_env, cwd)
    booted = policy.services or policy.host_ports or shared is not None
    side = Path(tempfile.mkdtemp(prefix="engine-sandbox-")) if booted else None
    status_read, status_write = os.pipe() if booted else (-1, -1)
    cgroup = _pids_cgroup(policy)
    try:
        reached = [shared.sockets] if shared is not None else []
        if side is not None:
            inner = _booted(policy, inner, side, shared, status_write)
        outer = bwrap_argv(
            policy, inner, workdir=cwd, writable=[*writable, *([side] if side else []), *reached],
            readable=[*readable, BOOT.parent],
        )  # fmt: skip
        if cgroup is not None:
            outer = cgroup.enter_argv(outer)
        async with trio.open_nursery() as nursery:
            if side is not None and policy.host_ports:
                await nursery.start(serve_host_ports, policy.host_ports, side / "sockets")
            result = await run_group(
                outer, cwd=cwd, env=env, timeout_s=timeout_s, stdin=stdin,
                pass_fds=(status_write,) if booted else (),
            )  # fmt: skip
            nursery.cancel_scope.cancel()
        logs = shared.logs() if shared is not None else _service_logs(policy, side)
        if side is not None:
            _check_boot(_said(status_read), result, timeout_s, logs)
        return SandboxRun(result, logs)
    finally:
        for fd in (status_read, status_write):
            if fd >= 0:
                os.close(fd)
        with trio.CancelScope(shield=True):
            if cgroup is not None:
                await cgroup.remove()
            if side is not None:
                await trio.to_thread.run_sync(shutil.rmtree, side, True)


def _said(status_read: int) -> str:
    """What the boot helper wrote to its pipe (it has exited: nothing more comes)."""
    os.set_blocking(status_read, False)
    try:
        return os.read(status_read, 1 << 16).decode("utf-8", "replace").strip()
    except BlockingIOError:
        return ""


def _check_boot(said: str, result: ProcessResult, timeout_s: float, logs: dict[str, str]) -> None:
    """A sandbox whose services were not ready is a `sandbox` error, with what they said."""
    if said == "booted":
        return
    if said.startswith("failed:"):
        why = said.removeprefix("failed:").strip()
    elif result.timed_out:
        why = f"its services were not ready within the trial's timeout ({timeout_s:g}s)"
    else:
        tail = result.stderr_tail(3)
        why = f"it exited with {result.exit_code} before its services were ready"
        why += f": {tail}" if tail else ""
    said_by = [f"{name}: {' | '.join(text.splitlines()[-3:])}" for name, text in logs.items() if text]
    raise TargetError("infra", "".join([f"sandbox boot failed: {why}", *(f"\n{s}" for s in said_by)]),
                      error_class="sandbox")  # fmt: skip


def _booted(
    policy: SandboxPolicy, inner: list[str], side: Path, shared: SharedServices | None, status_fd: int
) -> list[str]:
    """The boot helper's command line, its plan written beside the trial (never in the workspace)."""
    (side / "logs").mkdir()
    (side / "sockets").mkdir()
    relays = [{"port": p, "socket": str(side / "sockets" / f"{p}.sock")} for p in policy.host_ports]
    if shared is not None:
        relays += [{"port": p, "socket": str(shared.sockets / f"{p}.sock")} for p in shared.ports]
    plan = {"logs": str(side / "logs"), "relays": relays, "services": service_plans(policy)}
    plan["status_fd"] = status_fd
    (side / "plan.json").write_bytes(msgspec.json.encode(plan))
    return [sys.executable, "-I", "-S", str(BOOT), str(side / "plan.json"), "--", *inner]


def _service_logs(policy: SandboxPolicy, side: Path | None) -> dict[str, str]:
    return service_logs(policy, side / "logs") if side is not None else {}


def _pids_cgroup(policy: SandboxPolicy) -> PidsCgroup | None:
    most = policy.limits.max_processes
    root = pids_root() if most is not None else None
    return PidsCgroup(root, most) if root is not None and most is not None else None
