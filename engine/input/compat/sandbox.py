"""A source tool's `sandbox:` (AgentV's experiments, Keystone specs) and Keystone's `services:`, onto the
sandbox fields of engine's command target and of the command verifier (AgentV's `scripts:`).

`sandbox: true` or `sandbox: bubblewrap` asks for engine's default sandbox; a table names the rest:
`{type, network, host_ports, limits: {memory_mb, cpu_seconds, max_processes, max_file_mb}, pass_env,
services}`. `services: [{name, command, ready, env, timeout_seconds}]` (top level, as Keystone
writes them, or inside the table) start in each trial's sandbox, so they ask for one too.
"""

from __future__ import annotations

from typing import Any

from engine.errors import InputError
from engine.input.compat.common import list_of, table_of

IMAGE = "a container image needs the docker sandbox, which engine does not run yet: use `type: bubblewrap` "
IMAGE += "(this machine's system, read-only) and install what the agent needs here"
TABLE_FIELDS = ("type", "network", "host_ports", "limits", "pass_env", "services")
VERIFIER_FIELDS = ("sandbox", "network", "limits", "pass_env")  # a verifier has no services of its own


def normalize_sandbox(out: dict[str, Any], file: str) -> dict[str, Any]:
    if "sandbox" not in out and "services" not in out:
        return out
    fields = _fields(out.pop("sandbox", True), file)
    if "services" in out:
        if "services" in fields:
            raise InputError(file, "services", "not together with `sandbox.services`: use one of them")
        fields["services"] = _services(out.pop("services"), file, "services")
    if fields:
        _apply(out, fields, file)
    return out


def _fields(value: Any, file: str) -> dict[str, Any]:
    if value is True:
        return {"sandbox": "bubblewrap"}
    if value is False or value == "none":
        return {}
    if isinstance(value, str):
        return {"sandbox": value}
    table = table_of(value, file, "sandbox")
    if "image" in table:  # a container image: the docker sandbox
        raise InputError(file, "sandbox.image", IMAGE)
    unknown = [key for key in table if key not in TABLE_FIELDS]
    if unknown:
        raise InputError(file, f"sandbox.{unknown[0]}", f"expected one of {', '.join(TABLE_FIELDS)}")
    fields = {"sandbox": table.get("type", "bubblewrap")}
    fields.update({key: table[key] for key in TABLE_FIELDS[1:5] if key in table})
    if "services" in table:
        fields["services"] = _services(table["services"], file, "sandbox.services")
    return fields


def _services(items: Any, file: str, field: str) -> list[Any]:
    """Keystone's spelling of a timeout (timeout_seconds) onto engine's (timeout_s)."""
    services = []
    for i, item in enumerate(list_of(items, file, field)):
        service = dict(table_of(item, file, f"{field}[{i}]"))
        if "timeout_seconds" in service:
            service["timeout_s"] = service.pop("timeout_seconds")
        services.append(service)
    return services


def _apply(out: dict[str, Any], fields: dict[str, Any], file: str) -> None:
    """Onto the experiment's target and every variant's own: agents run in the sandbox; and onto the
    command verifiers, which run commands over the agent's work."""
    target = out.get("target")
    if not isinstance(target, dict) or target.get("kind") != "command":
        raise InputError(file, "sandbox", "expected a cli agent (a command target): only agents run in one")
    out["target"] = {**target, **fields}
    for variant in out.get("variants") or []:
        own = variant.get("target") if isinstance(variant, dict) else None
        if isinstance(own, dict) and own.get("kind", "command") == "command":
            variant["target"] = {**own, **fields}
    verifier = {key: value for key, value in fields.items() if key in VERIFIER_FIELDS}
    out["graders"] = [
        {**g, **verifier} if isinstance(g, dict) and g.get("kind") == "command" else g
        for g in out.get("graders") or []
    ]
