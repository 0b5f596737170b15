"""Case records in other tools' shapes: bare prompts without ids (Zeph's benchmark files) and
weakincentives datasets (`{id, input, expected}`)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from engine.events.spec import CaseSpec
from engine.input.compat.assertions import KEYS as ASSERTION_KEYS
from engine.input.compat.assertions import to_graders


def case_record(record: Any) -> Any:
    """A weakincentives dataset row `{id, input, expected}` or an AgentV test `{id, input,
    expected_output, criteria}`: `input` is the prompt (a structured input is sent as its JSON and
    kept whole under metadata.input, for evaluators); a criteria text is the judge's reference."""
    if isinstance(record, dict):
        record = _agentv_test(record)
        if "caseId" in record and "id" not in record:  # agents-fleet's case shape
            record = {"id": record["caseId"], **{k: v for k, v in record.items() if k != "caseId"}}
    if not isinstance(record, dict) or "input" not in record or "prompt" in record:
        return record
    out = dict(record)
    given = out.pop("input")
    out["prompt"] = given if isinstance(given, str) else json.dumps(given, ensure_ascii=False)
    if _is_conversation(given):  # AgentV's message list: the user's turns are the prompt
        out["prompt"] = "\n\n".join(str(m["content"]) for m in given if m.get("role") == "user")
        system = [str(m["content"]) for m in given if m.get("role") == "system"]
        if system and "context" not in out:
            out["context"] = "\n\n".join(system)
    metadata = out.get("metadata", {})
    if not isinstance(given, str) and isinstance(metadata, dict):
        out["metadata"] = {**metadata, "input": given}
    return out


def _is_conversation(given: Any) -> bool:
    return (
        isinstance(given, list) and bool(given)
        and all(isinstance(m, dict) and "role" in m and "content" in m for m in given)
        and any(m["role"] == "user" for m in given)
    )  # fmt: skip


def _agentv_test(record: dict[str, Any]) -> dict[str, Any]:
    out = dict(record)
    if isinstance(out.get("criteria"), str):
        out.setdefault("reference", out.pop("criteria"))
    key = next((k for k in ASSERTION_KEYS if k in out), None)
    if key is not None:  # run by the `case` grader as the case's own graders; kept as written too
        assertions = out.pop(key)
        metadata, criteria = out.get("metadata", {}), out.get("criteria", {})
        if isinstance(metadata, dict):
            out["metadata"] = {**metadata, "assertions": assertions}
        graders = to_graders(assertions)[0]
        if graders and isinstance(criteria, dict | None):
            out["criteria"] = {**(criteria or {}), "graders": graders}
    if "expected_output" in out and "expected" not in out:
        out["expected"] = out.pop("expected_output")
    return out


def with_stable_ids(records: list[Any]) -> list[Any]:
    """Cases without an id (a benchmark file of bare prompts) get one from their prompt's hash: the
    same case keeps its id when others are added or reordered, so runs still pair it. A repeated
    prompt gets -2, -3... in file order."""
    taken = {r["id"] for r in records if isinstance(r, dict) and isinstance(r.get("id"), str)}
    taken.update(r.id for r in records if isinstance(r, CaseSpec))  # a line read as a case (jsonl_cases)
    out = []
    for record in records:
        if isinstance(record, dict) and "id" not in record and isinstance(record.get("prompt"), str):
            base = "case-" + hashlib.sha256(record["prompt"].encode()).hexdigest()[:10]
            name, n = base, 1
            while name in taken:
                n += 1
                name = f"{base}-{n}"
            taken.add(name)
            record = {"id": name, **record}
        out.append(record)
    return out
