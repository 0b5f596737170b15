"""Appending events, each tagged by its type: the run's log writer and every write outside a run
(`engine mark`, `cancel`, `create`, `label`) go through here, so no caller types a tag by hand."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from engine.events.codec import encode
from engine.events.kinds import TAG_BY_TYPE, Event
from engine.store.contract import EncodedRows, EventStore


def event_rows(batches: Iterable[Sequence[Event]]) -> EncodedRows:
    """The store's rows of the events of `batches`, in order: (run id, tag of its type, encoded
    bytes), the events beside them (the store's keeper folds those, not a decode of the bytes). By
    batches, so the log writer's group commit needs no flattened copy of its events' rows."""
    events = [e for batch in batches for e in batch]
    return EncodedRows([(e.run_id, TAG_BY_TYPE[type(e)], encode(e)) for e in events], events)


def append_events(log: EventStore, events: Sequence[Event], blobs: Iterable[tuple[str, bytes]] = ()) -> int:
    """Append `events` (and the blobs they refer to) in one batch, all or nothing; the last sequence
    number after it."""
    return log.append(event_rows([events]), blobs)
