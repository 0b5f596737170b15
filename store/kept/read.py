"""The readers' side of projection snapshots (see `store.snapshots`): a run's kept state as its
snapshot folded forward over the events after it, and the runs the snapshots list.

Apart from the writer's keeper so `engine list`, `status` and `history` import only the small kept
projections they read (a run's summary and heads), not the run state's fold or the trial index.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

from engine.store.contract import EventStore
from engine.store.kept.codec import KeptRecord, Snapshotted, Stored, VersionedAs, fingerprint
from engine.store.kept.state_source import StateSource, recorded_source
from engine.store.log.guard import decode_of_run
from engine.store.projection import Projection
from engine.store.projections.heads import HEADS, RunHeads
from engine.store.projections.summary import SUMMARY, RunSummary

S = TypeVar("S")
INDEX_CHUNK = 16384

SUMMARIES = Snapshotted("summary", 1, SUMMARY, RunSummary, RunSummary)
RUN_HEADS = Snapshotted("heads", 1, HEADS, RunHeads, RunHeads)


class Derived(Generic[S]):
    """A record computed from another kept state whenever that one is saved, at the same sequence
    number (not a fold of its own): a few figures of a big state, read without decoding it. Its
    version includes its source's, so a change of the source's meaning rebuilds it too. The source is
    known by the version and tags its writer recorded in the store (store.kept.state_source): reading
    the record imports nothing of the source's own module."""

    def __init__(
        self, name: str, version: int, source: str, kind: type[S], derive: Callable[[Any], S]
    ) -> None:
        self.name, self._number, self.source, self.kind, self.derive = name, version, source, kind, derive
        self._records: dict[str, KeptRecord[S]] = {}

    def key(self, run_id: str) -> bytes:
        return self.name.encode() + b"\x00" + run_id.encode()

    def made_from(self, source: StateSource) -> KeptRecord[S]:
        """The record as derived from that version of its source."""
        record = self._records.get(source.version)
        if record is None:
            version = f"{self._number}.{fingerprint(self.kind):08x}+{source.version}"
            record = self._records[source.version] = VersionedAs(self.name, self.kind, version)
        return record


# kept records this process found stored by another version of their fold (or damaged): the reads
# folded the log instead, which a big store makes slow until `engine rebuild` writes them anew
_OLDER: set[str] = set()


def kept_record(log: EventStore, record: KeptRecord[S], run_id: str) -> Stored[S] | None:
    """The run's record as stored, when there is a readable one of this version (else None)."""
    get = getattr(log, "get_snapshot", None)
    if get is None:
        return None
    data = get(record.key(run_id))
    stored = record.decode(data)
    if stored is None and data is not None:
        _OLDER.add(record.name)
    return stored


def older_records() -> frozenset[str]:
    """The kinds of kept record this process's reads found of another version, and folded past."""
    return frozenset(_OLDER)


def load(log: EventStore, snap: Snapshotted[S], run_id: str) -> S:
    """The projection's state of the run: its snapshot, folded forward over the events after it."""
    stored = kept_record(log, snap, run_id)
    seq, state = stored if stored is not None else (0, snap.new(run_id))
    known = getattr(log, "last_of", None)
    last = known(run_id) if known is not None and stored is not None else None
    if last is None or last > seq:  # without the run's last event known, its index says
        fold_tail(log, snap.projection, state, run_id, seq + 1)
    return state


def kept(log: EventStore, derived: Derived[S], run_id: str) -> S | None:
    """The derived record of the run, when it is as current as its source's fold would be: derived
    from the source the store's writer recorded, with no event of the source's tags after it; else
    None: the caller folds the source instead."""
    source = recorded_source(log, derived.source)
    if source is None:
        return None
    stored = kept_record(log, derived.made_from(source), run_id)
    if stored is None:
        return None
    known = getattr(log, "last_of", None)
    if known is not None and known(run_id) == stored.seq:
        return stored.state
    tail = log.run_index(run_id, stored.seq + 1, limit=INDEX_CHUNK)
    if len(tail) == INDEX_CHUNK or any(tag in source.tags for _, tag in tail):
        return None
    return stored.state


def run_ids(log: EventStore) -> list[str]:
    """Every run, oldest first: from the snapshots when they list every run, else from the log."""
    listed = getattr(log, "listed_runs", None)
    found = listed() if listed is not None else None
    return log.run_ids() if found is None else found


def fold_tail(log: EventStore, projection: Projection[S], state: S, run_id: str, from_seq: int) -> int:
    """Fold the run's events from `from_seq` on into `state`; the last sequence number of the run read."""
    last = from_seq - 1
    while True:
        index = log.run_index(run_id, last + 1, limit=INDEX_CHUNK)
        wanted = [seq for seq, tag in index if tag in projection.tags]
        for seq, data in log.get_many(wanted) if wanted else ():  # type: ignore[attr-defined]
            projection.evolve(state, decode_of_run(log, seq, data, run_id), seq)
        if index:
            last = index[-1][0]
        if len(index) < INDEX_CHUNK:
            return last
