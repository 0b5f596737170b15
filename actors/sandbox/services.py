"""What a sandbox's services are made of: the boot helper that starts them inside, their plans, their
logs, and the handle of a shared workspace's running services."""

from __future__ import annotations

import shutil
from pathlib import Path

import msgspec
import trio

from engine.actors.process import kill_group
from engine.actors.targets.target_protocol import TargetError
from engine.events.sandbox import SandboxPolicy

BOOT = Path(__file__).with_name("boot.py")
LOG_KEEP = 16 << 10  # the tail of each service's output kept per trial


def service_plans(policy: SandboxPolicy) -> list[dict[str, object]]:
    return [msgspec.to_builtins(s) | {"timeout_s": s.timeout_s} for s in policy.services]


def service_logs(policy: SandboxPolicy, folder: Path) -> dict[str, str]:
    """The tail of each service's output, by name."""
    logs = {}
    for service in policy.services:
        path = folder / f"{service.name}.log"
        if path.exists():
            logs[service.name] = path.read_bytes()[-LOG_KEEP:].decode("utf-8", "replace")
    return logs


def boot_failure(policy: SandboxPolicy, folder: Path) -> TargetError | None:
    """The error of a sandbox whose services did not become ready (its reason, then what they said)."""
    failed = folder / "boot-failed"
    if not failed.exists():
        return None
    said = [
        f"{name}: {' | '.join(text.splitlines()[-3:])}" for name, text in service_logs(policy, folder).items()
    ]
    message = f"sandbox boot failed: {failed.read_text(errors='replace')}" + "".join(
        f"\n{s}" for s in said if s
    )
    return TargetError("infra", message, error_class="sandbox")


class SharedServices:
    def __init__(self, policy: SandboxPolicy, side: Path, proc: trio.Process) -> None:
        self.policy, self.side, self.proc = policy, side, proc
        self.sockets = side / "sockets"
        self.ports = [int(s.ready[4:]) for s in policy.services if s.ready.startswith("tcp:")]

    def logs(self) -> dict[str, str]:
        return service_logs(self.policy, self.side / "logs")

    async def aclose(self) -> None:
        with trio.CancelScope(shield=True):
            await kill_group(self.proc)
            await trio.to_thread.run_sync(shutil.rmtree, self.side, True)
