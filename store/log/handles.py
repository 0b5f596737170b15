"""What every part of the event log shares: its environment, its databases, and the read transaction.

`EventLog` (store.log) is composed of mixins (store.log_writes, store.log_reads, store.log_upkeep),
each typed against this base: it declares the handles the constructor sets and holds the helpers all
of them use, so a mixin is an ordinary method on the log (no object per call, no delegation).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import lmdb

from engine.store.log.files import check_trees
from engine.store.log.guard import damage_as_error
from engine.store.log.records import CHECKED_FROM_KEY, unpack_seq
from engine.store.log.validated import mark_whole

LAYOUT_VERSION = b"2"  # "1": records without checksums (still read; upgraded when opened to write)
ALL_TREES = frozenset({"events", "runs", "blobs", "meta", "snapshots", "index"})
SMALL_TREES = frozenset({"meta", "snapshots"})  # walked at every open: what every command reads


class LogHandles:
    """The log's state, set by `EventLog.__init__` and `EventLog._ready` (the databases once open)."""

    path: Path
    readonly: bool
    max_map_size: int | None
    checked_from: int | None
    _lock: threading.Lock
    _map_size: int
    _env: lmdb.Environment | None
    _dbs: list[object] | None
    _walked: set[str]
    _unmarked_state: str | None  # the file's state at open when no mark matched it (store.log.validated)
    _events: object
    _runs: object
    blobs_db: object
    _meta: object
    _snaps: object | None
    _index_db: object | None

    if TYPE_CHECKING:  # EventLog's own (store.log): it opens the databases

        def _ready(self) -> bool: ...

    def _begin(self, write: bool = False) -> lmdb.Transaction:
        try:
            return self._env.begin(write=write)
        except lmdb.MapResizedError:
            # another process grew the map: adopt its size
            self._env.set_mapsize(0)
            return self._env.begin(write=write)

    @contextmanager
    def _reading(self, *trees: str) -> Iterator[lmdb.Transaction | None]:
        """A read transaction of these databases; None for a store still being created (it reads as
        empty). A database not read before through this handle has its pages walked first."""
        with self._lock, damage_as_error(self.path):
            if not self._ready():
                yield None
                return
            self._walk(trees)
            with self._begin() as txn:
                if self.checked_from is None:  # an old store: another process may have upgraded it
                    self.checked_from = unpack_seq(txn.get(CHECKED_FROM_KEY, db=self._meta))
                yield txn

    def _walk(self, trees: tuple[str, ...]) -> None:
        unwalked = frozenset(trees) - self._walked
        if unwalked:
            check_trees(self.path, unwalked)
            self._walked |= unwalked
            if self._unmarked_state is not None and self._walked >= ALL_TREES:
                # every tree walked (`engine check` of a copied or restored store, say): a reader marks
                # the file as a writer does, if it is still as it was at open and the folder writable
                mark_whole(self.path, self._unmarked_state)
                self._unmarked_state = None
