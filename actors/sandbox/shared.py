"""A shared workspace's services (`workspace = "shared"` with `services`): started once per variant in
a sandbox of their own, beside the workspace every trial of the variant shares, and stopped when the
workspace goes.

Each trial still runs in its own sandbox with its own network namespace; a service's TCP port (the
one its `ready = "tcp:PORT"` names) reaches it through a Unix socket in a folder both sandboxes
see, so the agent connects to 127.0.0.1:PORT as it would with per-trial services.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import msgspec
import trio

from engine.actors.sandbox.bwrap import bwrap_argv, sandbox_env
from engine.actors.sandbox.probe import sandbox_problem
from engine.actors.sandbox.services import BOOT, SharedServices, boot_failure, service_plans
from engine.actors.targets.target_protocol import TargetError
from engine.events.sandbox import SandboxLimits, SandboxPolicy

BOOT_MARGIN_S = 30.0  # beyond the services' own timeouts: a hang guard, not a readiness check


async def start_shared_services(
    policy: SandboxPolicy, workspace: Path, env: dict[str, str], readable: list[Path]
) -> SharedServices:
    """The services running and ready, or a TargetError of class `sandbox` (none left running)."""
    problem = sandbox_problem(policy.kind)
    if problem is not None:
        raise TargetError("infra", f"sandbox {policy.kind!r} cannot start: {problem}", error_class="sandbox")
    side = Path(tempfile.mkdtemp(prefix="engine-services-"))
    (side / "logs").mkdir()
    (side / "sockets").mkdir()
    unlimited = msgspec.structs.replace(policy, limits=SandboxLimits(), host_ports=[])  # the user's own infra
    ports = [int(s.ready[4:]) for s in policy.services if s.ready.startswith("tcp:")]
    plan = {
        "logs": str(side / "logs"), "services": service_plans(policy),
        "relays": [{"port": p, "socket": str(side / "sockets" / f"{p}.sock")} for p in ports],
    }  # fmt: skip
    (side / "plan.json").write_bytes(msgspec.json.encode(plan))
    inner = [sys.executable, "-I", "-S", str(BOOT), str(side / "plan.json"), "--serve"]
    bare_env = sandbox_env(unlimited, env, workspace)
    argv = bwrap_argv(unlimited, inner, workdir=workspace, writable=[side], readable=[*readable, BOOT.parent])
    proc = await trio.lowlevel.open_process(
        argv,
        env=bare_env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    services = SharedServices(policy, side, proc)
    try:
        with trio.fail_after(sum(s.timeout_s for s in policy.services) + BOOT_MARGIN_S):
            said = await _first_line(proc)
    except BaseException:
        await services.aclose()
        raise
    if said != b"ready":
        failure = boot_failure(policy, side / "logs")
        await services.aclose()
        raise failure or TargetError(
            "infra", "sandbox boot failed: its sandbox exited", error_class="sandbox"
        )
    return services


async def _first_line(proc: trio.Process) -> bytes:
    """What the boot helper says first: "ready", or nothing (it exited)."""
    assert proc.stdout is not None
    said = b""
    async for chunk in proc.stdout:
        said += chunk
        if b"\n" in said:
            break
    return said.split(b"\n")[0]
