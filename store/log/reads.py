"""The event log's read path: events by sequence number or by run, the run index, blobs, and the
kept snapshots. Reads run in short transactions, a chunk at a time, so a long read never pins old
pages while a run appends."""

from __future__ import annotations

import itertools
import struct
from collections.abc import Iterator

from engine.store.errors import StoreDamagedError
from engine.store.log.handles import LogHandles
from engine.store.log.kept_io import INDEX_PREFIX, last_of, listed_runs
from engine.store.log.records import RecordDamaged, unseal_many, unseal_run

# this module's own, not log_handles': a method call on an imported name compiles to LOAD_ATTR (a
# bound method made per call, on the hot path) where a module-level one gets LOAD_METHOD (Python 3.11)
_U64 = struct.Struct(">Q")
READ_CHUNK = 16384


def _run_key(run_id: str, seq: int) -> bytes:
    return run_id.encode() + b"\x00" + _U64.pack(seq)


class LogReads(LogHandles):
    """The reading half of `EventLog`: any number of readers, in any process."""

    def last_seq(self) -> int:
        with self._reading("events") as txn:
            if txn is None:
                return 0
            cursor = txn.cursor(db=self._events)
            return _U64.unpack(cursor.key())[0] if cursor.last() else 0

    def read(self, from_seq: int = 1, to_seq: int | None = None) -> Iterator[tuple[int, bytes]]:
        """Events with from_seq <= seq (<= to_seq), in order, read in short transactions."""
        seq = max(from_seq, 1)
        while True:
            count, rows = self._read_chunk(seq, to_seq)
            yield from rows
            if count < READ_CHUNK:
                return
            seq += count

    def _read_chunk(self, from_seq: int, to_seq: int | None) -> tuple[int, Iterator[tuple[int, bytes]]]:
        """How many events from `from_seq` on (at most a chunk), and the events, verified."""
        # sequence numbers are dense (each batch starts at last + 1, nothing is ever deleted),
        # so only the first key of a chunk is decoded; the rest are counted
        with self._reading("events") as txn:
            if txn is None:
                return 0, iter(())
            cursor = txn.cursor(db=self._events)
            if not cursor.set_range(_U64.pack(from_seq)):
                return 0, iter(())
            first = _U64.unpack(cursor.key())[0]
            limit = READ_CHUNK if to_seq is None else max(0, min(READ_CHUNK, to_seq - first + 1))
            values = list(itertools.islice(cursor.iternext(keys=False, values=True), limit))
        try:
            return len(values), unseal_run(first, values, self.checked_from)
        except RecordDamaged as exc:
            raise StoreDamagedError(self.path, str(exc)) from None

    def run_index(self, run_id: str, from_seq: int = 1, limit: int | None = None) -> list[tuple[int, str]]:
        """(seq, tag) of a run's events from from_seq on (at most `limit`), without decoding them."""
        prefix = run_id.encode() + b"\x00"
        out: list[tuple[int, str]] = []
        with self._reading("runs") as txn:
            if txn is None or len(prefix) + 8 > self._env.max_key_size():
                return out  # no store yet, or an id too long to be a key: no such run
            cursor = txn.cursor(db=self._runs)
            if not cursor.set_range(_run_key(run_id, max(from_seq, 1))):
                return out
            for key, tag in cursor:
                if not key.startswith(prefix) or len(key) != len(prefix) + 8:
                    break
                out.append((_U64.unpack(key[len(prefix) :])[0], tag.decode()))
                if limit is not None and len(out) >= limit:
                    break
        return out

    def read_run(
        self, run_id: str, from_seq: int = 1, tags: set[str] | None = None
    ) -> Iterator[tuple[int, bytes]]:
        """A run's events (optionally only some tags), in log order, a chunk at a time."""
        seq = from_seq
        while True:
            index = self.run_index(run_id, seq, limit=READ_CHUNK)
            yield from self._get_many([s for s, tag in index if tags is None or tag in tags])
            if len(index) < READ_CHUNK:
                return
            seq = index[-1][0] + 1

    def get_many(self, seqs: list[int]) -> list[tuple[int, bytes]]:
        """The events at these sequence numbers (each one the run index named: a missing one is damage)."""
        return list(self._get_many(seqs))

    def _get_many(self, seqs: list[int]) -> Iterator[tuple[int, bytes]]:
        for start in range(0, len(seqs), READ_CHUNK):
            wanted, records = seqs[start : start + READ_CHUNK], []
            with self._reading("events") as txn:
                if txn is None:
                    return
                for seq in wanted:
                    value = txn.get(_U64.pack(seq), db=self._events)
                    if value is None:
                        raise StoreDamagedError(
                            self.path, f"event {seq}: the run index names it, it is missing"
                        )
                    records.append(value)
            try:
                yield from unseal_many(wanted, records, self.checked_from)
            except RecordDamaged as exc:
                raise StoreDamagedError(self.path, str(exc)) from None

    def run_ids(self) -> list[str]:
        """Every run id in the log, oldest first (by the sequence number of its first event)."""
        firsts: list[tuple[int, str]] = []
        with self._reading("runs") as txn:
            if txn is None:
                return []
            cursor = txn.cursor(db=self._runs)
            key = b""
            while cursor.set_range(key):
                found = cursor.key()
                run = found[:-9]
                firsts.append((_U64.unpack(found[-8:])[0], run.decode()))
                key = run + b"\x01"
        return [run for _, run in sorted(firsts)]

    def get_blob(self, key: str) -> bytes | None:
        with self._reading("blobs") as txn:
            return None if txn is None else txn.get(key.encode(), db=self.blobs_db)

    # --- the kept snapshots (store.snapshots writes them with each append) ---------------------------
    def get_snapshot(self, key: bytes) -> bytes | None:
        if key.startswith(INDEX_PREFIX):  # the trial index: its database's pages walked when first read
            with self._reading("index") as txn:
                return None if txn is None or self._index_db is None else txn.get(key, db=self._index_db)
        with self._reading() as txn:
            return None if txn is None or self._snaps is None else txn.get(key, db=self._snaps)

    def listed_runs(self) -> list[str] | None:
        """Every run, oldest first, from the snapshots (None: they may not list every run)."""
        with self._reading() as txn:
            return None if txn is None or self._snaps is None else listed_runs(txn, self._snaps)

    def last_of(self, run_id: str) -> int | None:
        """The run's last sequence number from the snapshots (None: not known for sure)."""
        with self._reading() as txn:
            return None if txn is None else last_of(txn, self._snaps, run_id)

    def commits(self) -> int:
        """The id of the last commit to the store: changes with every append, read without the events."""
        with self._reading() as txn:
            return 0 if txn is None else txn.id()
