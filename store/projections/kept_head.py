"""A few fields of a run's kept report state, read without decoding its cells.

The kept state of a big run holds many cells: decoding it all is costly (benchmarks/README.md#in-code-memory).
Whether the stored report is still the run's report needs only the state's status, grading round and the
report it last wrote, and the sequence number the snapshot was folded to: msgspec skips the rest
of the record without building it.
"""

from __future__ import annotations

import msgspec

from engine.store.contract import EventStore
from engine.store.kept.codec import KeptRecord
from engine.store.kept.read import kept_record
from engine.store.kept.state_source import RUN_STATE_SOURCE


class StateHead(msgspec.Struct, kw_only=True):
    """The kept RunState's fields this reads (the state is stored as a map: the rest is skipped)."""

    status: str = "pending"
    grading: int = 0
    report_hash: str = ""


class _PinnedStates(KeptRecord[StateHead]):
    """The run state's snapshots as this reads them, a few fields of each, by the state's pinned
    version (store.state_source): `engine report` need not import the state's module (nor the
    keeper) to tell a report current."""

    version = RUN_STATE_SOURCE.version  # type: ignore[assignment]


STATES = _PinnedStates(RUN_STATE_SOURCE.name, 0, StateHead)


def kept_state_head(log: EventStore, run_id: str) -> tuple[int, StateHead] | None:
    """(the snapshot's sequence number, its head), or None when there is no readable snapshot of
    this version (callers then ask the log)."""
    stored = kept_record(log, STATES, run_id)
    return None if stored is None else (stored.seq, stored.state)
