"""A JSONL suite's lines: a line that is a plain case is read straight into one.

Read as a dict first (`json.loads`), every line of a 100,000-case suite made a dict, three key
strings and its values, then a case that kept the values' strings: ~50 MiB of records at the load's
peak, and holes among the cases once the records went (benchmarks/README.md, "Live memory, round
five"). A line that msgspec decodes as a `CaseSpec` (every field a case's own, no unknown one, no
assertion graders in its criteria) is that case, the very one the record's conversion would give (the
same type, strict either way); any other line (another tool's shape, one without an id, NaN, an
error) is read as before, by `json.loads`, and goes through the records' path. The lines' places
("line N") are made after every line is read, so that none of them sits among the cases.
"""

from __future__ import annotations

import json
from array import array
from typing import Any

import msgspec

from engine.errors import InputError
from engine.events.spec import CaseSpec

_CASE = msgspec.json.Decoder(CaseSpec)


def jsonl_records(text: str, name: str, typed: bool) -> list[tuple[str, Any]]:
    """("line N", the line's case or record) for each line that is not blank; `typed`: plain cases
    read as cases."""
    numbers, found = array("q"), []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        numbers.append(number)
        case = _case(line) if typed else None
        found.append(_record(line, name, number) if case is None else case)
    return [(f"line {number}", record) for number, record in zip(numbers, found, strict=True)]


def _case(line: str) -> CaseSpec | None:
    try:
        case = _CASE.decode(line)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    return None if "graders" in case.criteria else case  # assertions are checked on the records' path


def _record(line: str, name: str, number: int) -> Any:
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        raise InputError(name, f"line {number}", f"invalid JSON: {exc.msg}") from None
