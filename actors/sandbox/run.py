"""Run one process in a trial's sandbox: limits, services and host ports around it, then bwrap.

Without services or host ports the agent runs straight under prlimit inside bwrap (the cheap
path); with them a small helper (boot.py) runs first inside the same sandbox. The services'
output comes back as text beside the agent's stderr; a service that was not ready in time is a
TargetError of class `sandbox`, never the agent's failure.
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
from engine.actors.sandbox.services import BOOT, SharedServices, boot_failure, service_logs, service_plans
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
    cgroup = _pids_cgroup(policy)
    try:
        reached = [shared.sockets] if shared is not None else []
        if side is not None:
            inner = _booted(policy, inner, side, shared)
        outer = bwrap_argv(
            policy, inner, workdir=cwd, env=env, writable=[*writable, *([side] if side else []), *reached],
            readable=[*readable, BOOT.parent],
        )  # fmt: skip
        if cgroup is not None:
            outer = cgroup.enter_argv(outer)
        async with trio.open_nursery() as nursery:
            if side is not None and policy.host_ports:
                await nursery.start(serve_host_ports, policy.host_ports, side / "sockets")
            result = await run_group(outer, cwd=cwd, env=_outer_env(), timeout_s=timeout_s, stdin=stdin)
            nursery.cancel_scope.cancel()
        logs = shared.logs() if shared is not None else _service_logs(policy, side)
        failure = boot_failure(policy, side / "logs") if side is not None else None
        if failure is not None:
            raise failure
        return SandboxRun(result, logs)
    finally:
        with trio.CancelScope(shield=True):
            if cgroup is not None:
                await cgroup.remove()
            if side is not None:
                await trio.to_thread.run_sync(shutil.rmtree, side, True)


def _booted(policy: SandboxPolicy, inner: list[str], side: Path, shared: SharedServices | None) -> list[str]:
    """The boot helper's command line, its plan written beside the trial (never in the workspace)."""
    (side / "logs").mkdir()
    (side / "sockets").mkdir()
    relays = [{"port": p, "socket": str(side / "sockets" / f"{p}.sock")} for p in policy.host_ports]
    if shared is not None:
        relays += [{"port": p, "socket": str(shared.sockets / f"{p}.sock")} for p in shared.ports]
    plan = {"logs": str(side / "logs"), "relays": relays, "services": service_plans(policy)}
    (side / "plan.json").write_bytes(msgspec.json.encode(plan))
    return [sys.executable, "-I", "-S", str(BOOT), str(side / "plan.json"), "--", *inner]


def _service_logs(policy: SandboxPolicy, side: Path | None) -> dict[str, str]:
    return service_logs(policy, side / "logs") if side is not None else {}


def _pids_cgroup(policy: SandboxPolicy) -> PidsCgroup | None:
    most = policy.limits.max_processes
    root = pids_root() if most is not None else None
    return PidsCgroup(root, most) if root is not None and most is not None else None


def _outer_env() -> dict[str, str]:
    """bwrap's own environment: the sandbox's is set with --clearenv/--setenv, this only finds bwrap."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
