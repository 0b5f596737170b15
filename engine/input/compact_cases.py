"""A big plan's cases made afresh, together, once the file's parsed data is no longer needed.

Loading 100,000 cases parses the file into dicts and lists (each case's fields), converts them to
cases that keep the parsed strings, and then drops the dicts. The dropped dicts leave holes all over
the memory the cases sit in, which Python's allocator keeps (a region goes back to the system only
when all of it is free): ~40 MiB at 100,000 cases that the run then carries to its end
(benchmarks/README.md, "Live memory, round five"). Decoded from their own encoding while the parsed
data is still held, the cases land together in fresh memory; the parsed data and the first cases then
go, and the memory they filled with them. The decoded cases are checked equal to the converted ones:
any case a round trip would change (a value msgpack has no form for) keeps the plan as it was.
"""

from __future__ import annotations

import msgspec

from engine.events.spec import CaseSpec, ExperimentSpec

COMPACT_FROM = 10_000  # cases: below this the holes are too small to be worth a second decode
_DECODER = msgspec.msgpack.Decoder(list[CaseSpec])


def compacted(spec: ExperimentSpec) -> ExperimentSpec:
    """`spec` with its cases decoded afresh from their encoding (equal to them), when it has many."""
    if len(spec.cases) < COMPACT_FROM:
        return spec
    try:
        fresh = _DECODER.decode(msgspec.msgpack.encode(spec.cases))
    except (msgspec.EncodeError, msgspec.ValidationError, TypeError, ValueError, OverflowError):
        return spec
    return msgspec.structs.replace(spec, cases=fresh) if fresh == spec.cases else spec
