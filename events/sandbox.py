"""Where a command agent (or a verifier's commands) runs: the sandbox policy of the experiment file.

`sandbox = "bubblewrap"` runs each trial in its own bubblewrap sandbox (read-only system, the
workspace the only writable folder besides a private /tmp, no home, its own PID namespace);
`network` says what it may reach, `limits` what it may use, `services` what runs beside it.
"""

from typing import Annotated, Literal

from msgspec import Meta

from engine.events.spec_base import Name, Seconds, Spec

SandboxKind = Literal["none", "bubblewrap", "docker"]
# "none": no network outside the sandbox (its own loopback, where its services listen, works);
# "loopback": that, plus the host's loopback ports listed in `host_ports`; "host": the host's network
NetworkPolicy = Literal["none", "loopback", "host"]
Limit = Annotated[int, Meta(ge=1, le=2**40)]
Port = Annotated[int, Meta(ge=1, le=65535)]


class SandboxLimits(Spec):
    """Per trial: address space (MB), CPU time (s), processes, and the largest file it may write (MB)."""

    memory_mb: Limit | None = None
    cpu_seconds: Limit | None = None
    max_processes: Limit | None = None
    max_file_mb: Limit | None = None


READY_FORMS = ("tcp:", "file:", "cmd:")


class ServiceSpec(Spec):
    """A process started in the trial's sandbox before the agent, ready when `ready` says so:
    "tcp:PORT" (a connection is accepted on the sandbox's loopback), "file:PATH" (it exists, relative
    to the workspace) or "cmd:COMMAND" (a shell command exits 0)."""

    name: Name
    command: list[str] | Name
    ready: Name
    env: dict[str, str] = {}
    timeout_s: Seconds = 30.0

    def __post_init__(self) -> None:
        if not self.ready.startswith(READY_FORMS):
            raise ValueError("ready: expected 'tcp:PORT', 'file:PATH' or 'cmd:COMMAND'")
        if self.ready.startswith("tcp:") and not self.ready[4:].isdigit():
            raise ValueError("ready: expected a port number after 'tcp:'")


class SandboxPolicy(Spec):
    """The policy one trial runs under, as the actors use it (built from a target's or a verifier's
    fields by `policy_of`)."""

    kind: SandboxKind = "none"
    network: NetworkPolicy = "host"
    host_ports: list[Port] = []
    limits: SandboxLimits = SandboxLimits()
    services: list[ServiceSpec] = []
    pass_env: list[Name] = []

    @property
    def sandboxed(self) -> bool:
        return self.kind != "none"


def network_of(kind: SandboxKind, network: NetworkPolicy | None) -> NetworkPolicy:
    """Inside a sandbox the network is closed unless the file opens it; outside, it is the host's."""
    if network is not None:
        return network
    return "host" if kind == "none" else "none"


def check_policy(policy: SandboxPolicy) -> None:
    """Settings that only mean something inside a sandbox are refused without one (never ignored)."""
    if policy.sandboxed:
        if policy.host_ports and policy.network != "loopback":
            raise ValueError('host_ports: expected network = "loopback" (the ports it opens)')
        return
    outside = policy.network != "host" or policy.limits != SandboxLimits() or policy.services
    if outside or policy.host_ports or policy.pass_env:
        why = 'sandbox: expected "bubblewrap" (network, limits, services, host_ports, pass_env apply in one)'
        raise ValueError(why)
