"""An in-memory event store: the storage contract without a disk, for tests and throwaway runs.

It keeps the same rules as the LMDB log (dense sequence numbers, whole batches, a run index,
first-write-wins blobs), so anything that works on it works on the log. Thread-safe, since the
log writer appends from a worker thread.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Iterable, Iterator, Sequence

from engine.store.contract import Row
from engine.store.kept.snapshots import Keeper


class MemoryStore:
    blocking_io = False  # nothing here waits on a disk: actors call it inline

    def __init__(self) -> None:
        self._events: list[bytes] = []  # seq n is at index n - 1
        self._runs: dict[str, list[tuple[int, str]]] = {}
        self._blobs: dict[str, bytes] = {}
        self._swapped: dict[str, bytes] = {}
        self._snapshots: dict[bytes, bytes] = {}
        self._keeper = Keeper()
        self._lock = threading.Lock()

    def hold_state(self, run_id: str, folded_to: int) -> bool:
        return self._keeper.adopt(run_id, folded_to)

    def offer_state(self, run_id: str, seq: int, items: list[tuple[bytes, bytes]]) -> None:
        self._keeper.offer(run_id, seq, items)

    def release_state(self, run_id: str, items: list[tuple[bytes, bytes]]) -> None:
        with self._lock:
            self._keeper.release(_MemorySnapshots(self), run_id, items)

    def append(self, batch: Sequence[Row], blobs: Iterable[tuple[str, bytes]] = ()) -> int:
        items = list(blobs)
        with self._lock:
            first = len(self._events) + 1
            for key, data in items:
                self._blobs.setdefault(key, data)
            rows = batch if isinstance(batch, list) else list(batch)  # EncodedRows: with their events
            self._keeper.advance(_MemorySnapshots(self), rows, first)
            for i, (run_id, tag, data) in enumerate(batch):
                self._events.append(data)
                self._runs.setdefault(run_id, []).append((first + i, tag))
            return len(self._events)

    def read(self, from_seq: int = 1, to_seq: int | None = None) -> Iterator[tuple[int, bytes]]:
        with self._lock:
            last = len(self._events) if to_seq is None else min(to_seq, len(self._events))
            rows = [(seq, self._events[seq - 1]) for seq in range(max(from_seq, 1), last + 1)]
        yield from rows

    def read_run(
        self, run_id: str, from_seq: int = 1, tags: set[str] | None = None
    ) -> Iterator[tuple[int, bytes]]:
        index = self.run_index(run_id, from_seq)
        with self._lock:
            rows = [(seq, self._events[seq - 1]) for seq, tag in index if tags is None or tag in tags]
        yield from rows

    def run_index(self, run_id: str, from_seq: int = 1, limit: int | None = None) -> list[tuple[int, str]]:
        with self._lock:
            rows = self._runs.get(run_id, [])
            start = bisect.bisect_left(rows, (max(from_seq, 1), ""))
            return rows[start : None if limit is None else start + limit]

    def get_many(self, seqs: list[int]) -> list[tuple[int, bytes]]:
        with self._lock:
            return [(seq, self._events[seq - 1]) for seq in seqs]

    def get_snapshot(self, key: bytes) -> bytes | None:
        with self._lock:
            return self._snapshots.get(key)

    def put_snapshots(self, items: list[tuple[bytes, bytes]]) -> None:
        with self._lock:
            self._snapshots.update(items)

    def clear_snapshots(self) -> None:
        with self._lock:
            self._keeper.forget()
            self._snapshots.clear()

    def run_ids(self) -> list[str]:
        with self._lock:
            return sorted(self._runs, key=lambda run: self._runs[run][0][0])

    def get_blob(self, key: str) -> bytes | None:
        with self._lock:
            return self._blobs.get(key)

    def swap(self, key: str, expected: bytes | None, new: bytes | None) -> bytes | None:
        with self._lock:
            found = self._swapped.get(key)
            if found == expected:
                if new is None:
                    self._swapped.pop(key, None)
                else:
                    self._swapped[key] = new
            return found

    def last_seq(self) -> int:
        with self._lock:
            return len(self._events)

    def close(self) -> None:
        return None

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _MemorySnapshots:
    """The snapshot keeper's view of the store, under its lock, before a batch goes in."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store

    def get(self, key: bytes) -> bytes | None:
        return self.store._snapshots.get(key)

    def put(self, key: bytes, value: bytes) -> None:
        self.store._snapshots[key] = value

    def blob(self, key: str) -> bytes | None:
        return self.store._blobs.get(key)  # the trial index keeps outputs' text for searches

    def last_before(self, run_id: str, seq: int) -> int:
        rows = self.store._runs.get(run_id, [])
        return rows[-1][0] if rows else 0  # the batch is not in yet: the run's last row is before it

    def events(self, run_id: str, from_seq: int, tags: frozenset[str]) -> Iterator[tuple[int, bytes]]:
        rows = self.store._runs.get(run_id, [])
        start = bisect.bisect_left(rows, (max(from_seq, 1), ""))
        return iter([(seq, self.store._events[seq - 1]) for seq, tag in rows[start:] if tag in tags])
