"""The event log's write path: appends (the hot path: every trial's events), the kept snapshots'
writes, the `meta` compare-and-set, and growing the map when a write finds it full.

Every write is one durable transaction through `_write`: a killed writer leaves whole batches only.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple, TypeVar

import lmdb

from engine.store.errors import StoreFullError, StoreReadOnlyError, StoreWriteError
from engine.store.log.bounded import pieces, room_for
from engine.store.log.guard import damage_as_error
from engine.store.log.handles import LogHandles
from engine.store.log.keepers import BatchKeeper, Keepers
from engine.store.log.kept_io import INDEX_PREFIX, TxnSnapshots, clear, mark_written, note_runs
from engine.store.log.opening import READ_ONLY_ENV, disk_nearly_full
from engine.store.log.records import seal

# this module's own, not log_handles': a method call on an imported name compiles to LOAD_ATTR (a
# bound method made per call, on the hot path) where a module-level one gets LOAD_METHOD (Python 3.11)
_U64 = struct.Struct(">Q")
T = TypeVar("T")


class Append(NamedTuple):
    """One event to append: its run, its tag and its encoded bytes.

    Plain tuples of the same shape are accepted too (the writer builds those: cheaper).
    """

    run_id: str
    tag: str
    data: bytes


def _index_rows(batch: Sequence[Append | tuple[str, str, bytes]], first: int) -> list[tuple[bytes, bytes]]:
    """The run-index rows of a batch, in key order (runs sorted, each run's seqs already rising)."""
    by_run: dict[str, list[tuple[bytes, bytes]]] = {}
    prefixes: dict[str, bytes] = {}
    pack = _U64.pack
    for i, (run_id, tag, _) in enumerate(batch):
        rows = by_run.get(run_id)
        if rows is None:
            rows = by_run[run_id] = []
            prefixes[run_id] = run_id.encode() + b"\x00"
        rows.append((prefixes[run_id] + pack(first + i), tag.encode()))
    return [row for run in sorted(by_run, key=prefixes.__getitem__) for row in by_run[run]]


class _NoRoom(Exception):
    """The map may not grow any further."""


class LogWrites(LogHandles):
    """The writing half of `EventLog`. Writes run in a worker thread (see actors.writer)."""

    if TYPE_CHECKING:  # the read path's (store.log_reads), beside this one in EventLog

        def run_index(
            self, run_id: str, from_seq: int = 1, limit: int | None = None
        ) -> list[tuple[int, str]]: ...

    _make_keepers: Keepers  # handed to EventLog by whoever opened it (engine.store.open)

    @functools.cached_property
    def _keepers(self) -> Sequence[BatchKeeper]:
        """The keepers, made at the first append: `engine list` and other readers never import them
        (they bring every kept projection and the trial index)."""
        return tuple(self._make_keepers())

    def append(
        self, batch: Sequence[Append | tuple[str, str, bytes]], blobs: Iterable[tuple[str, bytes]] = ()
    ) -> int:
        """Append a batch (and the blobs it refers to) in one durable transaction.

        Returns the last sequence number in the log after it (unchanged by an empty batch).
        """
        blob_items = list(blobs)

        def put_all(txn: lmdb.Transaction) -> int:
            for key, data in blob_items:
                txn.put(key.encode(), data, db=self.blobs_db, overwrite=False)
            cursor = txn.cursor(db=self._events)
            seq = _U64.unpack(cursor.key())[0] if cursor.last() else 0
            first = seq + 1
            kept = self._txn_snapshots(txn)
            note_runs(kept, batch, first)  # the log's own list of runs, keepers or not
            for piece, piece_first in pieces(batch, first):
                self._keep_and_put(txn, cursor, kept, piece, piece_first)
            return seq + len(batch)

        try:
            return self._write(put_all, room_for(batch, blob_items))
        except (_NoRoom, lmdb.Error) as exc:
            # nothing of this batch was written; say what was, and how to go on
            run_id = batch[0][0] if batch else ""
            full = isinstance(exc, _NoRoom | lmdb.DiskError) or disk_nearly_full(self.path)
            failure = StoreFullError if full else StoreWriteError
            raise failure(run_id, len(self.run_index(run_id)), str(exc)) from None

    def _keep_and_put(
        self, txn: lmdb.Transaction, cursor: lmdb.Cursor, kept: TxnSnapshots,
        batch: Sequence[Append | tuple[str, str, bytes]], first: int,
    ) -> None:  # fmt: skip
        try:  # before the batch's own rows are in: the keepers read what came before them
            for keeper in self._keepers:
                keeper.advance(kept, batch, first)
        except BaseException:
            self._forget_batch()  # the transaction is abandoned (then retried: a full map grows)
            raise
        pack = _U64.pack
        records = [(pack(first + i), seal(item[2])) for i, item in enumerate(batch)]
        cursor.putmulti(records, append=True)
        txn.cursor(db=self._runs).putmulti(_index_rows(batch, first))

    def _forget_batch(self) -> None:
        for keeper in self._keepers:
            keeper.forget()

    def _txn_snapshots(self, txn: lmdb.Transaction) -> TxnSnapshots:
        dbs = (self._events, self._runs, self._snaps, self._index_db)
        return TxnSnapshots(txn, dbs, self.checked_from, self.blobs_db)

    def put_snapshots(self, items: list[tuple[bytes, bytes]]) -> None:
        def put_all(txn: lmdb.Transaction) -> None:
            for key, value in items:
                txn.put(key, value, db=self._index_db if key.startswith(INDEX_PREFIX) else self._snaps)

        self._write(put_all)

    def hold_state(self, run_id: str, folded_to: int) -> bool:
        return any([keeper.adopt(run_id, folded_to) for keeper in self._keepers])

    def offer_state(self, run_id: str, seq: int, items: list[tuple[bytes, bytes]]) -> None:
        for keeper in self._keepers:
            keeper.offer(run_id, seq, items)

    def release_state(self, run_id: str, items: list[tuple[bytes, bytes]]) -> None:
        def put_final(txn: lmdb.Transaction) -> None:
            kept = self._txn_snapshots(txn)
            for keeper in self._keepers:
                keeper.release(kept, run_id, items)

        try:
            self._write(put_final)
        except lmdb.Error:  # a cache not written (the run's events are all in): readers fold the tail
            return

    def clear_snapshots(self) -> None:
        """Drop every snapshot (`engine rebuild` writes them again from the log)."""
        self._forget_batch()

        def clear_both(txn: lmdb.Transaction) -> None:
            clear(txn, self._snaps)
            clear(txn, self._index_db)

        self._write(clear_both)

    def swap(self, key: str, expected: bytes | None, new: bytes | None) -> bytes | None:
        """Compare-and-set in the `meta` db, inside one write transaction: LMDB admits one writer
        at a time across processes, so of two racing swaps from the same value exactly one wins."""
        name = b"swap:" + key.encode()

        def compare_and_set(txn: lmdb.Transaction) -> bytes | None:
            found = txn.get(name, db=self._meta)
            if found == expected:
                if new is None:
                    txn.delete(name, db=self._meta)
                else:
                    txn.put(name, new, db=self._meta)
            return found

        return self._write(compare_and_set)

    def _write(self, work: Callable[[lmdb.Transaction], T], room: int = 0) -> T:
        """`room`: map bytes the work may take, grown beforehand (a retry redoes all the work)."""
        if self.readonly:
            raise StoreReadOnlyError(
                f"store {self.path} is read-only (files not writable, or {READ_ONLY_ENV} set)"
            )
        with self._lock, damage_as_error(self.path):
            if room:
                self._make_room(room)
            while True:
                try:
                    with self._begin(write=True) as txn:
                        done = work(txn)
                        mark_written(txn, self._snaps)
                        return done
                except lmdb.MapFullError:
                    self._grow_map()

    def _make_room(self, room: int) -> None:
        """Double the map until `room` bytes are free past its last used page (up to the size limit:
        past it, the write finds the map full as it would have)."""
        info = self._env.info()
        used = (int(info["last_pgno"]) + 1) * int(self._env.stat()["psize"])
        size = int(info["map_size"])
        while size - used < room and (self.max_map_size is None or size * 2 <= self.max_map_size):
            size *= 2
        if size != int(info["map_size"]):
            self._env.set_mapsize(size)

    def _grow_map(self) -> None:
        size = int(self._env.info()["map_size"])
        if self.max_map_size is not None and size * 2 > self.max_map_size:
            raise _NoRoom(f"the store reached its size limit of {self.max_map_size} bytes")
        self._env.set_mapsize(size * 2)
