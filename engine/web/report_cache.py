"""The server's reports, kept per (run, grading round, the run's log position): N viewers of a live
run cost one build per position, not N; a quiet run's report is read once.

The position is the run's last sequence number as the kept snapshots know it (any event of the run,
labels included, moves it, so a kept entry is never stale); when they do not know it, the log's
last commit (any append anywhere makes a new entry: more builds, never a stale one). A build
happens once per key: viewers asking for the same key meanwhile wait for it instead of building
it again.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

from engine.store.contract import EventStore
from engine.views.current_report import current_report_json

ENTRIES = 32  # a big run's report is large (benchmarks/README.md#in-code-memory): a bounded few


def run_position(log: EventStore, run_id: str) -> tuple[str, int]:
    """Where the run is in the log: ("run", its last seq), else ("commit", the log's last commit)."""
    known = getattr(log, "last_of", None)
    last = known(run_id) if known is not None else None
    if last is not None:
        return ("run", last)
    return ("commit", getattr(log, "commits", log.last_seq)())


class KeptResults:
    """A bounded LRU of results by key, each computed once even when asked for at the same time."""

    def __init__(self, entries: int = ENTRIES) -> None:
        self.entries = entries
        self._kept: OrderedDict[Hashable, Any] = OrderedDict()
        self._building: dict[Hashable, threading.Lock] = {}
        self._lock = threading.Lock()

    def get(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        with self._lock:
            found = self._kept.get(key)
            if found is not None:
                self._kept.move_to_end(key)
                return found
            building = self._building.setdefault(key, threading.Lock())
        with building:  # one build per key: the others wait for it, then find it kept
            with self._lock:
                found = self._kept.get(key)
            if found is None:
                found = compute()
                with self._lock:
                    self._kept[key] = found
                    while len(self._kept) > self.entries:
                        self._kept.popitem(last=False)
        with self._lock:
            self._building.pop(key, None)
        return found


class Reports:
    """`engine report --json`'s bytes for the web view, kept per (run, round, position)."""

    def __init__(self, log: EventStore) -> None:
        self.log = log
        self.kept = KeptResults()
        self.builds = 0  # how many reports were read or built (tests count them)

    def report(self, run_id: str, grading: int | None = None) -> bytes:
        key = (run_id, grading, run_position(self.log, run_id))
        return self.kept.get(key, lambda: self._build(run_id, grading))

    def _build(self, run_id: str, grading: int | None) -> bytes:
        self.builds += 1
        return current_report_json(self.log, run_id, grading)
