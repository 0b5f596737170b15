"""What differs between two runs' specs, field by field, with both values: `variants[cold].params.
temperature: 0.1 -> 0.2`, not just "variants". Lists of named tables (variants, graders) are matched by
name, so a variant added or dropped is one line, not a shift of every later one."""

from __future__ import annotations

import json
from typing import Any

import msgspec

CLIP = 200  # a value longer than this is cut: the page and the terminal show the gist
SKIPPED = ("cases", "suite", "suites")  # the case sets are compared on their own (shared cases)


class SpecDifference(msgspec.Struct, kw_only=True):
    field: str  # a dotted path into the spec: "variants[cold].params.temperature"
    baseline: str  # the value as JSON ("(absent)" when the field is not there)
    candidate: str


def spec_differences(base: object, cand: object) -> list[SpecDifference]:
    b, c = msgspec.to_builtins(base), msgspec.to_builtins(cand)
    out: list[SpecDifference] = []
    for name in dict.fromkeys([*b, *c]):
        if name not in SKIPPED:
            _walk(name, b.get(name, _ABSENT), c.get(name, _ABSENT), out)
    return out


_ABSENT = object()


def _walk(path: str, b: Any, c: Any, out: list[SpecDifference]) -> None:
    if b == c:
        return
    if isinstance(b, dict) and isinstance(c, dict):
        for key in dict.fromkeys([*b, *c]):
            _walk(f"{path}.{key}", b.get(key, _ABSENT), c.get(key, _ABSENT), out)
    elif _named(b) and _named(c):
        b_by, c_by = {x["name"]: x for x in b}, {x["name"]: x for x in c}
        for key in dict.fromkeys([*b_by, *c_by]):
            _walk(f"{path}[{key}]", b_by.get(key, _ABSENT), c_by.get(key, _ABSENT), out)
    else:
        out.append(SpecDifference(field=path, baseline=_shown(b), candidate=_shown(c)))


def _named(value: Any) -> bool:
    """A list of tables with unique names (variants, graders): matched by name, not position."""
    if not isinstance(value, list) or not all(isinstance(x, dict) and x.get("name") for x in value):
        return False
    return len({x["name"] for x in value}) == len(value)


def _shown(value: Any) -> str:
    if value is _ABSENT:
        return "(absent)"
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= CLIP else text[: CLIP - 1] + "…"
