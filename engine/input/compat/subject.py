"""A source tool's file must name its model or agent under test.

engine's own files default to the embedded `local` model (the quick start needs no server). A file
in another tool's vocabulary never means that toy model: running it as subject (and judge) would
give verdicts about nothing. So such a file without a subject is refused, with the lines to add.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.errors import InputError
from engine.input.compat.zeph_llm import SUBJECT_HINT as ZEPH_HINT

AGENT_KEYS = ("runs", "early_exit", "scripts", "timeout_seconds")  # AgentV's own top-level fields


def source_tool(raw: dict[str, Any]) -> str | None:
    """Which tool's vocabulary the parsed file is written in (None: engine's own)."""
    if isinstance(raw.get("experiments"), dict):
        return "Zeph"
    if isinstance(raw.get("experiments"), list) or isinstance(raw.get("dataset"), str):
        return "weakincentives"
    if raw.get("kind") in ("skill", "role", "crew"):
        return "agents-fleet"
    if any(key in raw for key in ("agent", "parallelism", "resources")):
        return "Keystone"
    if is_agentv(raw):
        return "AgentV"
    return None


def is_agentv(raw: dict[str, Any]) -> bool:
    suites = raw.get("suites") if isinstance(raw.get("suites"), list) else []
    setup = raw.get("setup") if isinstance(raw.get("setup"), list) else []
    return (
        isinstance(raw.get("target"), str) or "targets" in raw or any(key in raw for key in AGENT_KEYS)
        or any(isinstance(s, dict) and "ref" in s for s in suites)
        or any(isinstance(s, dict) and "script" in s for s in setup)
    )  # fmt: skip


def require_subject(out: dict[str, Any], tool: str | None, file: str, base_dir: Path | None) -> None:
    """Refuse a source tool's file whose model under test would be engine's embedded `local` model."""
    if tool is None or _has_subject(out):
        return
    field, hint = _HINTS[tool](base_dir)
    raise InputError(file, field, hint)


def _has_subject(out: dict[str, Any]) -> bool:
    target = out.get("target")
    if isinstance(target, dict) and "kind" in target:
        return True  # an explicit `kind = "local"` is the user's choice
    variants = out.get("variants")
    return (
        bool(variants)
        and isinstance(variants, list)
        and all(
            isinstance(v, dict) and isinstance(v.get("target"), dict) and "kind" in v["target"]
            for v in variants
        )
    )


def _zeph(_: Path | None) -> tuple[str, str]:
    return "llm", ZEPH_HINT


def _fleet(_: Path | None) -> tuple[str, str]:
    return "target", (
        "names no agent to run the variants; add the agent to the front matter:\n"
        'target: { kind: command, command: ["./agent.sh"] }'
    )


def _weakincentives(_: Path | None) -> tuple[str, str]:
    return "target", (
        "names no adapter to evaluate; add the function that answers a case:\n"
        'target: { kind: python, callable: "agent:answer" }'
    )


def _keystone(_: Path | None) -> tuple[str, str]:
    block = "agent:\n  type: cli\n  binary: ./bin/agent\n  args: []"
    return "agent", "names no agent; add the agent block:\n" + block


def _agentv(base_dir: Path | None) -> tuple[str, str]:
    from engine.input.compat.agentv_project import target_names

    names = target_names(base_dir) if base_dir is not None else []
    if names:
        known = ", ".join(names)
        return "target", f"names no target; add one of .agentv/targets.yaml's ({known}):\ntarget: {names[0]}"
    return "target", (
        "names no target; add a command agent (or name one of .agentv/targets.yaml):\n"
        'target: { kind: command, command: ["./agent.sh"] }'
    )


_HINTS = {
    "Zeph": _zeph,
    "agents-fleet": _fleet,
    "weakincentives": _weakincentives,
    "Keystone": _keystone,
    "AgentV": _agentv,
}
