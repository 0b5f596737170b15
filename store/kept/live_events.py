"""Which of a batch's live events the snapshot keeper may fold as they are, instead of a decode of
their bytes.

A decode gives the kept states a second copy of every string they keep (each cell's case, variant
and output hash) and of the experiment's spec (~40 MiB at 100,000 cases), beside the live run's
own. A live event may be folded only where the kept state then encodes to the same bytes as the
log's fold (`engine rebuild` writes them again, byte for byte): its numbers must be of the types a
decode gives (a target's int where the event says float would be kept as an int, and a snapshot
would encode `5` where the log's fold encodes `5.0`; a timestamp too). The trial events' checks are
a few type tests; a spec is decoded and encoded again once per run, and taken live only when that
gives its bytes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from engine.events import kinds as k
from engine.events.codec import decode, encode
from engine.store.contract import EncodedRows

_PLAIN = (k.TrialStarted, k.TrialSkipped)  # their folds keep strings and ints only


def _floats(*values: object) -> bool:
    return all(value is None or type(value) is float for value in values)


def _grades_exact(event: k.TrialGraded) -> bool:
    return _floats(event.score) and all(_floats(g.score, g.spread, g.weight) for g in event.grades)


def _pace_only(agent: k.AgentReport) -> bool:
    """An agent record holding a streamed answer's pace alone, in floats: as it decodes."""
    plain = not (agent.stderr_hash or agent.metrics or agent.transcript_hash or agent.tools or agent.services)
    return plain and _floats(agent.ttft_ms, agent.tokens_per_s)


def _spec_exact(event: k.ExperimentDefined, data: bytes) -> bool:
    try:
        return encode(decode(data)) == data
    except Exception:  # noqa: BLE001 - bytes that do not decode: the keeper decodes them and gives up
        return False


def adoptable(event: Any, data: bytes) -> bool:
    """Whether the keeper may fold this live event as it is (else it decodes `data`)."""
    kind = type(event)
    if not _floats(getattr(event, "ts", 0.0)):  # an embedder's int time
        return False
    if kind in _PLAIN:
        return kind.VERSION == 1
    if kind is k.TrialCompleted or kind is k.TrialReused:  # kept whole while it waits for its grade
        figures = (event.latency_ms, event.cost_usd, *((event.source_ts,) if kind is k.TrialReused else ()))
        exact = event.agent is None or _pace_only(event.agent)
        return kind.VERSION == 1 and exact and _floats(*figures)
    if kind is k.TrialFailed:
        return kind.VERSION == 1 and _floats(event.latency_ms, event.cost_usd)
    if kind is k.TrialGraded:
        return kind.VERSION == 1 and _grades_exact(event)
    if kind is k.ExperimentDefined:
        return _spec_exact(event, data)
    return False


def as_logged(rows: EncodedRows, batches: Iterable[list[Any]]) -> None:
    """Each event of `rows` that is not adoptable replaced by the decode of its bytes (what the log's
    fold folds), in `rows.events` and in the batch it came from (`batches`, whose events `rows`
    encodes in order). For a run whose state its own process holds (store.kept.held_states): that
    state then encodes to the bytes a replay's does (a regrade's threshold is the decoded float, not
    the spec's default object, which a Struct omits by identity), and the keeper takes these events
    as they are."""
    i = 0
    for events in batches:
        for j, event in enumerate(events):
            data = rows[i][2]
            if not adoptable(event, data):
                events[j] = rows.events[i] = decode(data)
            i += 1
