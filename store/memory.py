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


class MemoryStore:
    blocking_io = False  # nothing here waits on a disk: actors call it inline

    def __init__(self) -> None:
        self._events: list[bytes] = []  # seq n is at index n - 1
        self._runs: dict[str, list[tuple[int, str]]] = {}
        self._blobs: dict[str, bytes] = {}
        self._swapped: dict[str, bytes] = {}
        self._lock = threading.Lock()

    def append(self, batch: Sequence[Row], blobs: Iterable[tuple[str, bytes]] = ()) -> int:
        items = list(blobs)
        with self._lock:
            first = len(self._events) + 1
            for key, data in items:
                self._blobs.setdefault(key, data)
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
