"""Projection snapshots kept in the store, per run: what `list`, `status`, `history`, `report` and the
web view ask for, read as a snapshot plus the few events logged after it, not as a replay.

The store's writer keeps them (`Keeper`), in the same transaction as the events: a run's summary and
heads after every batch (a few fields each), its report state at the batch that ends the run and
whenever the run's events since its last save reach max(`STATE_EVERY`, the state's cells): the state
is O(variants x cases), so saving it every fixed number of events would cost a run of 100k cases a
multi-MB encode every few thousand events (work quadratic in the run, trials/s falling as it goes);
in proportion to its size, encoding costs at most about one cell per event, whatever the run's size.
The bound for readers: a snapshot is never more than max(STATE_EVERY, cells) of the run's events
behind the log, so the tail a reader folds costs no more than a few times the snapshot's own decode.
A kill -9 leaves snapshots and events that agree. Readers never trust a snapshot further
than its sequence number: each one is folded forward over the run's later events (`load`). The log
stays the source of truth: `rebuild` folds every snapshot again from it, to the same bytes.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol, TypeVar

import msgspec

from engine.events.codec import decode
from engine.store.contract import EncodedRows, EventStore
from engine.store.kept import reuse_index
from engine.store.kept.codec import KeptRecord, Snapshotted, Stored
from engine.store.kept.held_states import HeldStates, Items
from engine.store.kept.live_events import adoptable

# the readers' side (store.snapshot_read), named here too for the callers that also keep or rebuild
from engine.store.kept.read import INDEX_CHUNK as INDEX_CHUNK
from engine.store.kept.read import RUN_HEADS, SUMMARIES, Derived, fold_tail
from engine.store.kept.read import kept as kept
from engine.store.kept.read import load as load
from engine.store.kept.read import run_ids as run_ids
from engine.store.kept.report_digest import digest_record
from engine.store.kept.state_snapshot import STATES, STATUS
from engine.store.kept.state_source import source_of, source_record
from engine.store.log.guard import DECODE_DAMAGE
from engine.store.log.kept_io import COMPLETE, LAST, LISTED
from engine.store.log.records import RecordDamaged, pack_seq
from engine.store.projection import Projection
from engine.store.trial_index.index import TAGS as INDEX_TAGS
from engine.store.trial_index.keeper import IndexKeeper, rebuild_index

S = TypeVar("S")
STATE_EVERY = 5000  # run events between two saves of a run's report state
CACHED = 16  # kept projections' states cached by the writer (per projection and run)
REPORT_TAG = "report.written"
ENDING_TAGS = frozenset({"run.completed", "run.cancelled", REPORT_TAG})
# what keeping a snapshot may raise without the batch failing (a full map still fails it: it grows)
# (zlib.error: an output blob the trial index reads is damaged: that run's index is given up, not the append)
KEEPING_FAILED = (*DECODE_DAMAGE, RecordDamaged, TypeError, ValueError, NotImplementedError, OverflowError,
                  msgspec.EncodeError, zlib.error)  # fmt: skip

ALL: tuple[Snapshotted[Any], ...] = (SUMMARIES, RUN_HEADS, STATES)
DERIVED: dict[str, tuple[Derived[Any], ...]] = {STATES.name: (STATUS,)}
STATE_SOURCES: dict[str, Snapshotted[Any]] = {STATES.name: STATES}  # the states records derive from
KEPT_TAGS = frozenset().union(*(snap.projection.tags for snap in ALL), INDEX_TAGS)
EVERY = {SUMMARIES.name: 1, RUN_HEADS.name: 1, STATES.name: STATE_EVERY}
# a state whose encoding grows with the run: saved no more often than every `size(state)` events
SIZED: dict[str, Callable[[Any], int]] = {STATES.name: lambda state: len(state.cells)}
SAVE_NOW = 1 << 62  # unsaved events of a state just caught up from the log: worth saving at once


class SnapshotIO(Protocol):
    """What the keeper needs inside the store's write transaction."""

    def get(self, key: bytes) -> bytes | None: ...

    def put(self, key: bytes, value: bytes) -> None: ...

    def blob(self, key: str) -> bytes | None:
        """A blob as stored (written in this transaction or before it)."""
        ...

    def last_before(self, run_id: str, seq: int) -> int:
        """The sequence number of the run's last event before `seq` (0: none)."""
        ...

    def events(self, run_id: str, from_seq: int, tags: frozenset[str]) -> Iterator[tuple[int, bytes]]:
        """The run's events of those tags from `from_seq` on, as committed so far."""
        ...


def decoded_once(
    rows: list[tuple[int, str, bytes]], live: list[Any] | None = None, first: int = 0, logged: bool = False
) -> dict[int, Any] | None:
    """The batch's events that a kept projection folds, decoded once for all of them (events are
    frozen: they can be shared); None when one cannot be decoded: each projection then meets the
    damage on its own and gives up alone, as it would have. `live`: the batch's events as this
    process made them (`live[seq - first]`), taken as they are where that keeps the same bytes
    (store.live_events): no decode, no second copy of their strings in the kept states. `logged`: the
    live events are those already (store.kept.live_events.as_logged)."""
    try:
        if live is None:
            return {seq: decode(data) for seq, tag, data in rows if tag in KEPT_TAGS}
        out = {}
        for seq, tag, data in rows:
            if tag in KEPT_TAGS:
                event = live[seq - first]
                out[seq] = event if logged or adoptable(event, data) else decode(data)
        return out
    except KEEPING_FAILED:
        return None


def fold_rows(projection: Projection[S], state: S, rows: Iterator[tuple[int, bytes]]) -> None:
    for seq, data in rows:
        projection.evolve(state, decode(data), seq)


class Keeper:
    """The writer's side: each kept projection's state per run, folded as batches are committed.

    A state is cached between batches; when the log holds events of the run the cache has not seen
    (another process appended, or this one just started), it is caught up from the stored snapshot
    and the events after it, read in the same transaction."""

    def __init__(self) -> None:
        self._cache: dict[bytes, Stored[Any]] = {}
        self._unsaved: dict[bytes, int] = {}
        self._given_up: set[bytes] = set()
        self._saved: set[bytes] = set()  # the states saved while folding the current batch
        self._index = IndexKeeper()  # the trial index (store.trial_index): chunks, not one state
        self._last: tuple[object, int] | None = None  # the batch last folded, and its first seq
        self._abandoned: tuple[dict[bytes, Stored[Any]], dict[bytes, int]] | None = None
        self._source_recorded = False  # this process's version of the run state, in the store
        self.held = HeldStates(STATES)  # runs whose process holds their report state: not folded here

    def adopt(self, run_id: str, folded_to: int) -> bool:
        """This process holds the run's report state, folded up to `folded_to` (store.kept.held_states);
        False when it may not (a hold of the run exists already)."""
        return self.held.adopt(run_id, folded_to)

    def offer(self, run_id: str, seq: int, items: Items) -> None:
        self.held.offer(run_id, seq, items)

    def release(self, io: SnapshotIO, run_id: str, items: Items) -> bool:
        return self.held.release(io, run_id, items)

    def forget(self) -> None:
        """The transaction was abandoned: what was folded into the cache in it never happened. The
        cache is kept aside for the same batch appended again at the same place (a full map grows,
        then the batch is retried): it holds exactly the log plus that batch, where catching up from
        the store would decode a big state and fold its tail (seconds at 100k cells, and its memory
        again)."""
        unsaved = self._unsaved.copy()
        for key in self._saved:  # saved in the abandoned transaction: that write never happened
            unsaved[key] = SAVE_NOW
        self._abandoned = (self._cache.copy(), unsaved)
        self._cache.clear()
        self._unsaved.clear()
        self._index.forget()
        self.held.forget()
        self._source_recorded = False  # with the transaction, or the kept records cleared

    def advance(self, io: SnapshotIO, batch: Sequence[tuple[str, str, bytes]], first: int) -> None:
        """Fold the batch (its first event is `first`) into each kept state, saving those due. An
        `EncodedRows` batch brings its events: folded as they are, not decoded from the bytes."""
        live = batch.events if isinstance(batch, EncodedRows) and len(batch.events) == len(batch) else None
        held_live = live is not None and batch.live_state  # type: ignore[attr-defined]
        again = self._last is not None and self._last[0] is batch and self._last[1] == first
        if again and self._abandoned is not None:
            self._cache, self._unsaved = self._abandoned
        self._abandoned, self._last, self._saved = None, (batch, first), set()
        self._index.begin(again)
        if not self._source_recorded:
            record_sources(io)
            self._source_recorded = True
        by_run: dict[str, list[tuple[int, str, bytes]]] = {}
        for i, (run_id, tag, data) in enumerate(batch):
            by_run.setdefault(run_id, []).append((first + i, tag, data))
        for run_id, rows in by_run.items():
            prior = io.last_before(run_id, first)  # the log listed the run already (store.log.kept_io)
            ending = any(tag in ENDING_TAGS for _, tag, _ in rows)
            events = decoded_once(rows, live, first, held_live)
            self._keep_index(io, run_id, prior, rows, ending, events)
            self._keep_digests(io, run_id, rows, events)
            self._keep_reuse(io, run_id, rows, events)
            try:
                held = self._held(io, run_id, rows, held_live)
            except KEEPING_FAILED:  # the run's records after the hold's mark are damaged: fold them here
                self.held.drop(run_id)
                held = False
            for snap in ALL:
                if snap.key(run_id) in self._given_up or (held and snap is STATES):
                    continue
                try:
                    self._advance_one(io, snap, run_id, prior, rows, ending, again, events)
                except KEEPING_FAILED:  # damage, or a state it cannot store: readers fold the log
                    self._cache.pop(snap.key(run_id), None)
                    self._given_up.add(snap.key(run_id))  # for this process: never a cost per batch

    def _held(self, io: SnapshotIO, run_id: str, rows: list[tuple[int, str, bytes]], live: bool) -> bool:
        """Whether the run's report state is its process's to save (no state of its own kept here)."""
        if not self.held.advance(io, run_id, rows, live):
            return False
        self._cache.pop(STATES.key(run_id), None)  # a state of its own from before the hold
        self._unsaved.pop(STATES.key(run_id), None)
        return True

    def _keep_index(
        self, io: SnapshotIO, run_id: str, prior: int, rows: list[tuple[int, str, bytes]], ending: bool,
        events: dict[int, Any] | None,
    ) -> None:  # fmt: skip
        if b"tix\x00" + run_id.encode() not in self._given_up:
            try:
                self._index.advance(io, run_id, prior, rows, ending, events)
            except (*KEEPING_FAILED, KeyError, IndexError, AttributeError):  # a cache: never fails an append
                self._index.forget()  # readers fold the log after the index's last save
                self._given_up.add(b"tix\x00" + run_id.encode())

    def _keep_digests(
        self, io: SnapshotIO, run_id: str, rows: list[tuple[int, str, bytes]], events: dict[int, Any] | None
    ) -> None:
        """The digest of each report the batch writes (its blob is in the same transaction)."""
        for seq, tag, data in rows:
            if tag != REPORT_TAG:
                continue
            try:
                report_hash = (events[seq] if events is not None else decode(data)).report_hash
                record = digest_record(run_id, report_hash, io.blob(report_hash))
            except KEEPING_FAILED:  # a cache: never fails an append (history reads the report)
                continue
            if record is not None:
                io.put(*record)

    def _keep_reuse(
        self, io: SnapshotIO, run_id: str, rows: list[tuple[int, str, bytes]], events: dict[int, Any] | None
    ) -> None:
        """The reuse index's records of the batch's outputs (store.kept.reuse_index)."""
        try:
            for key, value in reuse_index.index_rows(
                io.get, run_id, reuse_index.decoded_outputs(rows, events)
            ):
                io.put(key, value)
        except KEEPING_FAILED:  # an output that does not decode: it is not offered for reuse
            return

    def _advance_one(
        self, io: SnapshotIO, snap: Snapshotted[Any], run_id: str, prior: int,
        rows: list[tuple[int, str, bytes]], ending: bool, again: bool, events: dict[int, Any] | None,
    ) -> None:  # fmt: skip
        key = snap.key(run_id)
        cached = self._cache.pop(key, None)
        if len(self._cache) >= CACHED * len(ALL):  # runs this process no longer writes to
            self._unsaved.pop(next(iter(self._cache)), None)
            del self._cache[next(iter(self._cache))]
        folded = again and cached is not None and cached.seq == rows[-1][0]  # in the abandoned try
        if not folded and (cached is None or cached.seq != prior):
            cached = self._caught_up(io, snap, run_id, prior)
            self._unsaved[key] = SAVE_NOW
        assert cached is not None
        tags = snap.projection.tags
        if not folded and events is None:
            fold_rows(snap.projection, cached.state, ((s, d) for s, tag, d in rows if tag in tags))
        elif not folded:
            evolve, state = snap.projection.evolve, cached.state
            for seq, tag, _ in rows:
                if tag in tags:
                    evolve(state, events[seq], seq)
        cached = self._cache[key] = Stored(rows[-1][0], cached.state)
        unsaved = self._unsaved[key] = self._unsaved.get(key, 0) + len(rows)
        if ending or unsaved >= save_every(snap, cached.state):
            for item_key, value in snapshot_items(snap, run_id, cached.seq, cached.state):
                io.put(item_key, value)
            self._saved.add(key)
            self._unsaved[key] = 0

    def _caught_up(self, io: SnapshotIO, snap: Snapshotted[Any], run_id: str, prior: int) -> Stored[Any]:
        stored = snap.decode(io.get(snap.key(run_id))) if prior else None
        if stored is None or stored.seq > prior:
            stored = Stored(0, snap.new(run_id))
        if stored.seq < prior:
            fold_rows(snap.projection, stored.state, io.events(run_id, stored.seq + 1, snap.projection.tags))
        return Stored(prior, stored.state)


def derived_of(snap: Snapshotted[Any]) -> list[tuple[KeptRecord[Any], Callable[[Any], Any]]]:
    """The records derived from this kept state, as this process's version of it makes them."""
    return [(d.made_from(snap.source), d.derive) for d in DERIVED.get(snap.name, ())]


def snapshot_items(snap: Snapshotted[Any], run_id: str, seq: int, state: Any) -> Items:
    """A kept state folded up to `seq`, as the store keeps it: its snapshot and the records derived
    from it (the keeper's saves, `rebuild`'s, and a process's own for the state it holds)."""
    items = [(snap.key(run_id), snap.encode(seq, state))]
    return items + [(d.key(run_id), d.encode(seq, derive(state))) for d, derive in derived_of(snap)]


def state_items(state: Any, seq: int) -> Items:
    """A run's report state as the keeper stores it (for a process that holds its run's state:
    store.kept.held_states)."""
    return snapshot_items(STATES, state.run_id, seq, state)


def record_sources(io: SnapshotIO) -> None:
    """Record in the store the version and tags of each state records are derived from, as this
    writer folds it (when the store does not say so already): readers check those records against it
    (store.kept.state_source). A writer of another version recording its own makes this one's records
    read as stale: readers then fold, never misread."""
    for name in DERIVED:
        source = STATE_SOURCES[name].source
        key, value = source_record(source)
        if source_of(name, io.get(key)) != source:
            io.put(key, value)


def save_every(snap: Snapshotted[S], state: S) -> int:
    """Events between two saves of the state: a fixed number, or its size when that is more."""
    sized = SIZED.get(snap.name)
    return max(EVERY[snap.name], sized(state) if sized is not None else 0)


def _digest_items(log: EventStore, run_id: str, report_hash: str | None) -> list[tuple[bytes, bytes]]:
    """The digest of the run's latest report, as the keeper stored it when the report was written."""
    try:
        record = digest_record(run_id, report_hash, log.get_blob(report_hash)) if report_hash else None
    except KEEPING_FAILED:  # a report that is not one: history reads it, and says so
        return []
    return [record] if record is not None else []


def rebuild(log: EventStore) -> int:
    """Fold every snapshot of every run again from the log and store it; how many were written."""
    written = 0
    log.clear_snapshots()  # type: ignore[attr-defined]  # of projections no longer kept, too
    for run_id in log.run_ids():
        index = log.run_index(run_id, limit=1)
        items = [(LISTED + pack_seq(index[0][0]), run_id.encode())]
        for snap in ALL:
            state = snap.new(run_id)
            last = fold_tail(log, snap.projection, state, run_id, 1)
            items += snapshot_items(snap, run_id, last, state)
            if snap is RUN_HEADS:
                items += _digest_items(log, run_id, state.report_hash())
        try:
            items.extend(rebuild_index(log, run_id, last))
        except KEEPING_FAILED:  # a damaged output blob: no index for this run (its pages fold the log)
            pass
        items.append((LAST + run_id.encode(), pack_seq(last)))
        log.put_snapshots(items)  # type: ignore[attr-defined]
        written += len(ALL)
    log.put_snapshots(reuse_index.rebuild_rows(log))  # type: ignore[attr-defined]
    sources = [source_record(STATE_SOURCES[name].source) for name in DERIVED]
    log.put_snapshots([*sources, (COMPLETE, b"1")])  # type: ignore[attr-defined]  # every run is listed
    return written
