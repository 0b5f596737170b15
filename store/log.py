"""The LMDB event log: one writer at a time, any number of readers, several processes.

Layout (named databases in one environment, so one transaction covers all):
- `events`: big-endian u64 sequence number -> msgpack-encoded event
- `runs`:   run id + NUL + u64 sequence -> event tag (lets a run be read, or a
            cancel be found, without decoding the whole log)
- `blobs`:  sha256 hex -> bytes (content-addressed; see `store.blobs`)
- `meta`:   small settings, e.g. the layout version

A batch is one durable transaction: a killed writer leaves whole batches only.
"""

from __future__ import annotations

import os
import struct
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TypeVar

import lmdb

_U64 = struct.Struct(">Q")
LAYOUT_VERSION = b"1"
DEFAULT_MAP_SIZE = 64 << 20
T = TypeVar("T")
READ_CHUNK = 4096


class Append:
    """One event to append: its run, its tag and its encoded bytes."""

    __slots__ = ("run_id", "tag", "data")

    def __init__(self, run_id: str, tag: str, data: bytes) -> None:
        self.run_id = run_id
        self.tag = tag
        self.data = data


def _run_key(run_id: str, seq: int) -> bytes:
    return run_id.encode() + b"\x00" + _U64.pack(seq)


class EventLog:
    """Thread-safe handle on the log. Writes run in a worker thread (see actors.writer)."""

    def __init__(self, path: str | os.PathLike[str], map_size: int = DEFAULT_MAP_SIZE) -> None:
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self._env = lmdb.open(str(self.path), map_size=map_size, max_dbs=8, max_readers=256, readahead=False)
        self._events = self._env.open_db(b"events")
        self._runs = self._env.open_db(b"runs")
        self.blobs_db = self._env.open_db(b"blobs")
        self._meta = self._env.open_db(b"meta")
        # set_mapsize needs no open transaction in this process: one lock keeps it so
        self._lock = threading.Lock()
        self._write(lambda txn: txn.put(b"layout", LAYOUT_VERSION, db=self._meta, overwrite=False))

    def close(self) -> None:
        with self._lock:
            self._env.close()

    def __enter__(self) -> EventLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- writing -------------------------------------------------------------
    def append(self, batch: list[Append], blobs: Iterable[tuple[str, bytes]] = ()) -> int:
        """Append a batch (and the blobs it refers to) in one durable transaction.

        Returns the sequence number of the last event (0 if the batch is empty).
        """
        blob_items = list(blobs)

        def put_all(txn: lmdb.Transaction) -> int:
            for key, data in blob_items:
                txn.put(key.encode(), data, db=self.blobs_db, overwrite=False)
            cursor = txn.cursor(db=self._events)
            seq = _U64.unpack(cursor.key())[0] if cursor.last() else 0
            first = seq + 1
            rows = [(_U64.pack(first + i), item.data) for i, item in enumerate(batch)]
            cursor.putmulti(rows, append=True)
            index = txn.cursor(db=self._runs)
            index.putmulti(
                sorted((_run_key(it.run_id, first + i), it.tag.encode()) for i, it in enumerate(batch))
            )
            return seq + len(batch)

        return self._write(put_all)

    def _write(self, work: Callable[[lmdb.Transaction], T]) -> T:
        with self._lock:
            while True:
                try:
                    with self._begin(write=True) as txn:
                        return work(txn)
                except lmdb.MapFullError:
                    self._env.set_mapsize(self._env.info()["map_size"] * 2)

    def _begin(self, write: bool = False) -> lmdb.Transaction:
        try:
            return self._env.begin(write=write)
        except lmdb.MapResizedError:
            # another process grew the map: adopt its size
            self._env.set_mapsize(0)
            return self._env.begin(write=write)

    # --- reading -------------------------------------------------------------
    def last_seq(self) -> int:
        with self._lock, self._begin() as txn:
            cursor = txn.cursor(db=self._events)
            return _U64.unpack(cursor.key())[0] if cursor.last() else 0

    def read(self, from_seq: int = 1, to_seq: int | None = None) -> Iterator[tuple[int, bytes]]:
        """Events with from_seq <= seq (<= to_seq), in order, read in short transactions."""
        seq = max(from_seq, 1)
        while True:
            chunk = self._read_chunk(seq, to_seq)
            yield from chunk
            if len(chunk) < READ_CHUNK:
                return
            seq = chunk[-1][0] + 1

    def _read_chunk(self, from_seq: int, to_seq: int | None) -> list[tuple[int, bytes]]:
        out: list[tuple[int, bytes]] = []
        with self._lock, self._begin() as txn:
            cursor = txn.cursor(db=self._events)
            if not cursor.set_range(_U64.pack(from_seq)):
                return out
            unpack = _U64.unpack
            for key, value in cursor:
                seq = unpack(key)[0]
                if to_seq is not None and seq > to_seq:
                    break
                out.append((seq, value))
                if len(out) >= READ_CHUNK:
                    break
        return out

    def run_index(self, run_id: str, from_seq: int = 1, limit: int | None = None) -> list[tuple[int, str]]:
        """(seq, tag) of a run's events from from_seq on (at most `limit`), without decoding them."""
        prefix = run_id.encode() + b"\x00"
        out: list[tuple[int, str]] = []
        with self._lock, self._begin() as txn:
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
            yield from self.get_many([s for s, tag in index if tags is None or tag in tags])
            if len(index) < READ_CHUNK:
                return
            seq = index[-1][0] + 1

    def get_many(self, seqs: list[int]) -> list[tuple[int, bytes]]:
        out: list[tuple[int, bytes]] = []
        for start in range(0, len(seqs), READ_CHUNK):
            with self._lock, self._begin() as txn:
                for seq in seqs[start : start + READ_CHUNK]:
                    value = txn.get(_U64.pack(seq), db=self._events)
                    if value is not None:
                        out.append((seq, value))
        return out

    def run_ids(self) -> list[str]:
        """Every run id in the log, in first-appearance order of their ids' keys."""
        ids: list[str] = []
        with self._lock, self._begin() as txn:
            cursor = txn.cursor(db=self._runs)
            key = b""
            while cursor.set_range(key):
                run = cursor.key()[:-9]
                ids.append(run.decode())
                key = run + b"\x01"
        return ids

    def get_blob(self, key: str) -> bytes | None:
        with self._lock, self._begin() as txn:
            return txn.get(key.encode(), db=self.blobs_db)

    def map_size(self) -> int:
        return int(self._env.info()["map_size"])
