"""AgentV eval-file assertions (`assertions:` or `assert:` on a test) as engine graders.

Each test's assertions become its `criteria.graders`, run on that test's outputs by the `case`
grader. Kinds engine has a grader for are mapped; the others are named in one `warning:` line per
suite file and not run.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from engine.errors import InputError, warn_input
from engine.events.graders import GraderSpec
from engine.events.kind_convert import convert_kinded

KEYS = ("assertions", "assert")
JUDGES = ("llm-judge", "llm_judge", "rubrics", "rubric", "judge")


def to_graders(assertions: Any) -> tuple[list[dict[str, Any]], list[str]]:
    """(engine grader tables, the kinds left unrun) for one test's assertion list."""
    graders: list[dict[str, Any]] = []
    unrun: list[str] = []
    for item in assertions if isinstance(assertions, list) else []:
        if not isinstance(item, dict):
            unrun.append(repr(item))
            continue
        kind = str(item.get("type", item.get("kind", "?")))
        mapped = _mapped(kind, item)
        if mapped is None:
            unrun.append(kind)
            continue
        common = {k: item[k] for k in ("name", "weight") if k in item}
        graders += [{**grader, **common} for grader in mapped]
    return graders, unrun


def _mapped(kind: str, item: dict[str, Any]) -> list[dict[str, Any]] | None:
    value = item.get("value")
    folded = kind.startswith(("icontains", "istarts-with", "iends-with"))  # case-insensitive
    base = kind.removeprefix("i") if folded else kind
    values = [str(v) for v in value] if isinstance(value, list) else [str(value)] if value is not None else []
    if base == "contains" and len(values) == 1 or base == "contains-all" and values:
        return [{"kind": "contains", "value": v, "case_sensitive": not folded} for v in values]
    if base == "contains-any" and values:
        return [_regex("|".join(re.escape(v) for v in values), folded)]
    if base in ("starts-with", "ends-with") and len(values) == 1:
        text = re.escape(values[0])
        pattern = rf"\A\s*{text}" if base == "starts-with" else rf"{text}\s*\Z"
        return [_regex(pattern, folded)]
    if kind == "regex" and len(values) == 1:
        return [_regex(values[0], False)]
    if kind in ("equals", "exact") and len(values) == 1:
        return [{"kind": "exact", "value": values[0]}]
    if kind in ("not-contains", "not_contains") and len(values) == 1:
        return [{"kind": "forbidden", "value": values[0]}]
    if kind in ("is-json", "is_json", "json"):
        return [{"kind": "json"}]
    if kind in JUDGES:
        return [{"kind": "judge", "rubric": _rubric(item)}]
    return None


def _regex(pattern: str, folded: bool) -> dict[str, Any]:
    return {"kind": "regex", "pattern": pattern, "case_sensitive": not folded}


def _rubric(item: dict[str, Any]) -> list[dict[str, Any]]:
    """`rubrics`/`criteria` (strings or {id, outcome|description, weight}) or a judge `prompt`."""
    listed = item.get("rubrics", item.get("criteria"))
    if isinstance(listed, str | None):
        text = listed or item.get("prompt") or item.get("value")
        return [{"name": "judge", "weight": 1.0, "description": str(text)}] if text else []
    rubric = []
    for i, entry in enumerate(listed if isinstance(listed, list) else []):
        entry = entry if isinstance(entry, dict) else {"description": str(entry)}
        text = entry.get("outcome", entry.get("description", entry.get("criterion", "")))
        name = str(entry.get("id", entry.get("name", f"r{i + 1}")))
        rubric.append({"name": name, "weight": float(entry.get("weight", 1.0)), "description": str(text)})
    return rubric


def check_case_graders(record: Any, file: str, where: str) -> None:
    """A mapped assertion must be a grader engine can build (a regex that compiles...)."""
    graders = record.get("criteria", {}).get("graders") if isinstance(record, dict) else None
    if not isinstance(graders, list):
        return
    try:
        convert_kinded(graders, list[GraderSpec])
    except msgspec.ValidationError as exc:
        raise InputError(file, f"{where}.assertions", str(exc)) from None


def warn_unrun(records: list[Any], file: str) -> None:
    """One `warning:` line naming the assertion kinds of this suite file that engine does not run."""
    kinds = sorted({kind for r in records if isinstance(r, dict) for kind in _unrun_of(r)})
    if kinds:
        warn_input(file, "assertions", f"not run (no engine grader for them): {', '.join(kinds)}")


def _unrun_of(record: dict[str, Any]) -> list[str]:
    found = next((record[k] for k in KEYS if k in record), None)
    return to_graders(found)[1] if found is not None else []
