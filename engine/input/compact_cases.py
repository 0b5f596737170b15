"""A big plan's cases made afresh, together, once the file's parsed data is no longer needed.

Loading 100,000 cases parses the file into dicts and lists (each case's fields), converts them to
cases that keep the parsed strings, and then drops the dicts. The dropped dicts leave holes all over
the memory the cases sit in, which Python's allocator keeps (a region goes back to the system only
when all of it is free): ~16 MiB at 100,000 cases that the run then carries to its end
(benchmarks/README.md, "Live memory, round five"). Decoded from their own encoding while the parsed
data is still held, the cases land together in fresh memory; the parsed data and the first cases then
go, and the memory they filled with them. The decoded cases are checked equal to the converted ones:
any case a round trip would change (a value msgpack has no form for) keeps the plan as it was.
"""

from __future__ import annotations

from typing import Any

import msgspec

from engine.events.spec import CaseSpec, ExperimentSpec

COMPACT_FROM = 10_000  # cases: below this the holes are too small to be worth a second decode
CHUNK = 1_000  # cases decoded at a time: what a chunk frees, the next one takes
_DECODER = msgspec.msgpack.Decoder(list[CaseSpec])


def compacted(spec: ExperimentSpec) -> ExperimentSpec:
    """`spec` with its cases decoded afresh from their encoding (equal to them), when it has many."""
    fresh = compacted_cases(spec.cases)
    return spec if fresh is spec.cases else msgspec.structs.replace(spec, cases=fresh)


def compacted_cases(cases: list[CaseSpec]) -> list[CaseSpec]:
    """`cases` decoded afresh (equal to them) when there are many, else `cases` themselves. Called
    where the data they were parsed from is still held: a file's inline cases before its suites are
    read, a suite's cases before its records go."""
    fresh = decoded_afresh(cases) if len(cases) >= COMPACT_FROM else None
    return cases if fresh is None else fresh


def decoded_afresh(cases: list[CaseSpec], empties: dict[str, Any] | None = None) -> list[CaseSpec] | None:
    """Cases equal to `cases`, decoded from their encoding a chunk at a time; with `empties`, each
    case's empty tags, criteria or metadata is the one shared object named there, swapped in as each
    chunk is decoded (the empties a chunk drops are where the next chunk's go: no holes). None when
    a case would not come back equal."""
    fresh: list[CaseSpec] = []
    try:
        for start in range(0, len(cases), CHUNK):
            part = _DECODER.decode(msgspec.msgpack.encode(cases[start : start + CHUNK]))
            if empties:
                share_empties(part, empties)
            fresh += part
        # equal, and the same JSON: a date-time with an offset comes back as the same instant in UTC,
        # equal to it but not written the same
        same = fresh == cases and msgspec.json.encode(fresh) == msgspec.json.encode(cases)
    except (msgspec.EncodeError, msgspec.ValidationError, TypeError, ValueError, OverflowError):
        return None
    return fresh if same else None


def share_empties(cases: list[CaseSpec], empties: dict[str, Any]) -> None:
    """Each case's empty tags, criteria or metadata replaced by the shared object `empties` names."""
    for case in cases:
        for name, empty in empties.items():
            if not getattr(case, name):
                msgspec.structs.force_setattr(case, name, empty)
