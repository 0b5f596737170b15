"""The LMDB event log: one writer at a time, any number of readers, several processes.

Layout (named databases in one environment, so one transaction covers all):
- `events`: big-endian u64 sequence number -> msgpack-encoded event
- `runs`:   run id + NUL + u64 sequence -> event tag (lets a run be read, or a
            cancel be found, without decoding the whole log)
- `blobs`:  sha256 hex -> bytes (content-addressed; see `store.blobs`)
- `meta`:   small settings, e.g. the layout version
- `snapshots`: projection name + NUL + run id -> a projection's state (see `store.snapshots`)

A batch is one durable transaction: a killed writer leaves whole batches only.

`EventLog` opens and closes the store here; its write path is in `store.log.writes` (the keepers it
is handed write their records in the same transaction: `store.log.keepers`), its read path in
`store.log.reads`, check and backup in `store.log.upkeep` (mixins over `store.log.handles`). Open a
store with `engine.store.open.open_event_log`, which hands it the default keepers.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import lmdb

from engine.store.errors import StoreError
from engine.store.log.files import check_data_file
from engine.store.log.guard import damage_as_error
from engine.store.log.handles import ALL_TREES, LAYOUT_VERSION, SMALL_TREES
from engine.store.log.keepers import Keepers, no_keepers
from engine.store.log.kept_io import fresh
from engine.store.log.opening import open_databases, open_env, read_only_wanted, size_limit
from engine.store.log.reads import LogReads
from engine.store.log.upkeep import LogUpkeep
from engine.store.log.validated import mark_whole, marked_whole, state_now, txnid_of
from engine.store.log.writes import Append, LogWrites

__all__ = ["DEFAULT_MAP_SIZE", "LAYOUT_VERSION", "Append", "EventLog"]

# the map is address space, not memory or disk (the file grows as pages are written): a store of a
# million trials fits without a doubling, and each doubling abandons the batch's transaction, whose
# retry left the writer's memory a step higher (benchmarks/README.md, "Live memory, round three")
DEFAULT_MAP_SIZE = 2 << 30


class EventLog(LogReads, LogWrites, LogUpkeep):
    """Thread-safe handle on the log. Writes run in a worker thread (see actors.writer)."""

    blocking_io = True  # durable commits wait on the disk

    def __init__(
        self,
        path: str | os.PathLike[str],
        map_size: int = DEFAULT_MAP_SIZE,
        readonly: bool | None = None,
        max_map_size: int | None = None,
        keepers: Keepers = no_keepers,
    ) -> None:
        """Open (or create) the log at `path`, after checking its files (see `store.files`).

        `readonly`: None opens read-only when the files are not writable or $ENGINE_STORE_READONLY
        is set. `max_map_size` caps how far the map grows before an append fails as full
        (default: $ENGINE_STORE_MAX_SIZE, else no cap but the disk). `keepers` makes, at the first
        append, what keeps records beside the events (store.log.keepers): a store opened the normal
        way (`engine.store.open.open_event_log`) has the snapshots', the trial index's and the digests'.
        """
        self.path = Path(path)
        self._make_keepers = keepers
        self.readonly = read_only_wanted(self.path) if readonly is None else readonly
        self.max_map_size = max_map_size or size_limit()
        if self.max_map_size:
            map_size = min(map_size, self.max_map_size)
        if not self.readonly:
            self.path.mkdir(parents=True, exist_ok=True)
        elif not (self.path / "data.mdb").exists():
            raise StoreError(f"no store at {self.path} (a read-only store must exist)")
        # set_mapsize needs no open transaction in this process: one lock keeps it so
        self._lock = threading.Lock()
        self._map_size = map_size
        self._env = None
        self._dbs = None
        self.checked_from = None
        self._snaps = None
        self._index_db = None
        # a writer walks every database's pages at open; a reader those it reads, when first read;
        # neither when the file is as last walked or committed by engine (see `store.log.validated`)
        state = state_now(self.path)
        self._unmarked_state = None
        if marked_whole(self.path, state):
            trees, self._walked = frozenset(), set(ALL_TREES)  # the main tree only (it names the rest)
        elif self.readonly:
            trees, self._walked = SMALL_TREES, set(SMALL_TREES)
            # a reader marks the file once it has walked it all, unless it must not write at all
            # ($ENGINE_STORE_READONLY: a backup, a copy) or cannot (read-only media, another's files)
            self._unmarked_state = None if read_only_wanted(self.path) else state
        else:
            trees, self._walked = None, set(ALL_TREES)
        if not check_data_file(self.path, trees) and self.readonly:
            return  # another process is creating the store: it reads as empty until it is there
        if trees is None:
            mark_whole(self.path, state)  # every page walked: the next open need not
        with damage_as_error(self.path):
            self._env = open_env(self.path, map_size, self.readonly)
            try:
                self._ready()
            except BaseException:
                self._env.close()
                raise

    def _ready(self) -> bool:
        """Whether the store has its databases. A store another process was creating when this
        handle opened reads as empty, and is looked at again at each read until it is there."""
        if self._env is None:
            if not check_data_file(self.path):
                return False
            self._env = open_env(self.path, self._map_size, self.readonly)
        if self._dbs is None:
            self._dbs, self.checked_from = open_databases(self._env, self.readonly, LAYOUT_VERSION)
            if self._dbs is not None:
                self._events, self._runs, self.blobs_db, self._meta, self._snaps, self._index_db = self._dbs
        return self._dbs is not None

    def close(self) -> None:
        with self._lock:
            if self._env is not None:
                self._mark_if_ours()
                self._env.close()

    def _mark_if_ours(self) -> None:
        """A writer's last look: when the newest commit is an engine writer's, LMDB wrote every page
        since the file was last found whole, and the next open need not walk it again."""
        if self.readonly or self._dbs is None:
            return
        try:
            with self._begin() as txn:
                ours = fresh(txn, self._snaps)
                txnid = txn.id()
        except lmdb.Error:
            return  # closing a damaged store: the next open walks it and says so
        state = state_now(self.path)
        if ours and state is not None and txnid_of(state) == txnid:
            mark_whole(self.path, state)

    def __enter__(self) -> EventLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
