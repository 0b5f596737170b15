"""A few fields of a run's kept report state, read without decoding its cells.

The kept state of a big run holds many cells: decoding it all is costly (benchmarks/README.md#in-code-memory).
Whether the stored report is still the run's report needs only the state's status, grading round and the
report it last wrote, and the sequence number the snapshot was folded to: msgspec skips the rest
of the record without building it.
"""

from __future__ import annotations

import functools

import msgspec

from engine.store.contract import EventStore
from engine.store.kept.codec import KeptRecord, VersionedAs
from engine.store.kept.read import kept_record
from engine.store.kept.state_source import recorded_source


class StateHead(msgspec.Struct, kw_only=True):
    """The kept RunState's fields this reads (the state is stored as a map: the rest is skipped)."""

    status: str = "pending"
    grading: int = 0
    report_hash: str = ""


STATE = "state"  # the run state's kept snapshots' name (store.kept.state_snapshot.STATES)


@functools.lru_cache(maxsize=4)
def states_as(version: str) -> KeptRecord[StateHead]:
    """The run state's snapshots as this reads them, a few fields of each, by the version the store's
    writer recorded (store.kept.state_source): `engine report` need not import the state's module
    (nor the keeper) to tell a report current."""
    return VersionedAs(STATE, StateHead, version)


def kept_state_head(log: EventStore, run_id: str) -> tuple[int, StateHead] | None:
    """(the snapshot's sequence number, its head), or None when there is no readable snapshot of
    the version the store's writer recorded (callers then ask the log)."""
    source = recorded_source(log, STATE)
    stored = None if source is None else kept_record(log, states_as(source.version), run_id)
    return None if stored is None else (stored.seq, stored.state)
