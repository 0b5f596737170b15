"""The reuse index: request fingerprint -> the trials, in every run of the store, whose output it gave.

Kept by the store's writer in the same transaction as the events (`Keeper.advance`), one record per
fingerprint: a later run finds what it may reuse with one key read per trial, never a scan of the
store. A record lists (run, seq, made_ts) in log order; `made_ts` is when the output was made (a
reused trial's source's, through any chain of reuses), what `max_age` is measured against. Only
outputs are indexed (trial.completed, trial.reused): errors and timeouts are never reused. An
imported bundle's trials enter it as they are appended. `engine rebuild` folds it again from the log.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple

import msgspec

from engine.events import kinds as k
from engine.events.codec import decode
from engine.store.contract import EventStore
from engine.store.log.records import RESIDUE, TRAILER, crc32c, seal

PREFIX = b"reuse\x00"
# outputs, the judge calls of their grades, and pairwise judges' calls
INDEXED_TAGS = k.OUTPUT_TAGS | {"trial.graded", "pairwise.judged"}
_DECODE = msgspec.msgpack.Decoder(list[tuple[str, int, float]]).decode
_ENCODE = msgspec.msgpack.Encoder().encode


def _sealed(entries: list[tuple[str, int, float]]) -> bytes:
    return seal(_ENCODE(entries))


def _entries(data: bytes | None) -> list[tuple[str, int, float]]:
    """A record's entries; none when there is no record or its checksum fails (a changed byte must not
    point a reuse at another trial: the output is sent again, and `engine check` names the damage)."""
    if not data or len(data) <= TRAILER or crc32c(data) != RESIDUE:
        return []
    try:
        return list(_DECODE(bytes(data[:-TRAILER])))
    except (msgspec.DecodeError, msgspec.ValidationError):
        return []


class Source(NamedTuple):
    """An earlier output a trial with this fingerprint may take: where it is logged, when it was made."""

    run_id: str
    seq: int
    made_ts: float


def key_of(fingerprint: str) -> bytes:
    return PREFIX + fingerprint.encode()


def made_ts(event: k.TrialCompleted) -> float:
    return event.source_ts or event.ts if isinstance(event, k.TrialReused) else event.ts


def sources(log: EventStore, fingerprint: str) -> list[Source]:
    """Every indexed output of this fingerprint, oldest logged first (none for a store without it)."""
    get = getattr(log, "get_snapshot", None)
    data = get(key_of(fingerprint)) if get is not None and fingerprint else None
    return [Source(*entry) for entry in _entries(data)]


def index_rows(
    get: Callable[[bytes], bytes | None], run_id: str, outputs: Iterable[tuple[int, Any]]
) -> Iterator[tuple[bytes, bytes]]:
    """The records to put for these (seq, event) outputs of a run, each merged with what `get` holds."""
    merged: dict[bytes, list[tuple[str, int, float]]] = {}
    for seq, event in outputs:
        for fingerprint, made in _fingerprints(event):
            key = key_of(fingerprint)
            entries = merged.get(key)
            if entries is None:
                held = get(key)
                entries = merged[key] = _entries(held)
            if not any(r == run_id and s == seq for r, s, _ in entries):
                entries.append((run_id, seq, made))
    for key, entries in merged.items():
        yield key, _sealed(entries)


def _fingerprints(event: Any) -> Iterator[tuple[str, float]]:
    """An output's request fingerprint, or a grading's judge calls' (with when each was made)."""
    if isinstance(event, k.TrialCompleted) and event.fingerprint:
        yield event.fingerprint, made_ts(event)
    elif isinstance(event, k.TrialGraded):
        for grade in event.grades:
            if grade.fingerprint:
                yield grade.fingerprint, event.ts
    elif isinstance(event, k.PairwiseJudged) and event.fingerprint and not event.error:
        yield event.fingerprint, event.ts


def decoded_outputs(
    rows: Iterable[tuple[int, str, bytes]], events: dict[int, Any] | None
) -> Iterator[tuple[int, Any]]:
    """The batch's output events, decoded (or as the writer already has them)."""
    for seq, tag, data in rows:
        if tag in INDEXED_TAGS:
            yield seq, events[seq] if events is not None else decode(data)


def rebuild_rows(log: EventStore) -> list[tuple[bytes, bytes]]:
    """The whole index, folded again from the log (after the snapshots were cleared): each record's
    entries in log order, as the writer appends them."""
    held: dict[bytes, bytes] = {}
    for run_id in log.run_ids():
        outputs = ((seq, decode(data)) for seq, data in log.read_run(run_id, tags=set(INDEXED_TAGS)))
        held.update(index_rows(held.get, run_id, outputs))
    return [(key, _sealed(sorted(_entries(value), key=lambda e: e[1]))) for key, value in held.items()]
