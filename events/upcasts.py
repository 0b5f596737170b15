"""Lifting stored events written by older versions of engine (pure functions on raw dicts).

v1 -> v2 of `experiment.defined` and `regrade.started`: targets and graders became tagged unions,
one Struct per kind. A v1 target omitted `kind` when it was the default ("local"), and a v1 spec
could carry a field its kind never used (it was ignored); v2 names the kind and drops such fields.
"""

from __future__ import annotations

from typing import Any

from engine.events.graders import GRADER_KINDS
from engine.events.targets import TARGET_KINDS


def _keep_fields(raw: Any, kinds: dict[str, type], default_kind: str | None) -> Any:
    if not isinstance(raw, dict):
        return raw
    kind = raw.get("kind", default_kind)
    allowed = set(getattr(kinds.get(kind), "__struct_fields__", ()))
    return {"kind": kind, **{k: v for k, v in raw.items() if k in allowed}} if allowed else raw


def _graders(items: Any) -> Any:
    return [_keep_fields(g, GRADER_KINDS, None) for g in items] if isinstance(items, list) else items


def tagged_specs(raw: dict[str, Any]) -> dict[str, Any]:
    """experiment.defined v1 -> v2."""
    spec = dict(raw.get("spec") or {})
    spec["target"] = _keep_fields(spec.get("target", {}), TARGET_KINDS, "local")
    if "graders" in spec:
        spec["graders"] = _graders(spec["graders"])
    return {**raw, "spec": spec}


def tagged_graders(raw: dict[str, Any]) -> dict[str, Any]:
    """regrade.started v1 -> v2."""
    return {**raw, "graders": _graders(raw.get("graders", []))}
