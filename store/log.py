"""The LMDB event log: one writer at a time, any number of readers, several processes.

Layout (named databases in one environment, so one transaction covers all):
- `events`: big-endian u64 sequence number -> msgpack-encoded event
- `runs`:   run id + NUL + u64 sequence -> event tag (lets a run be read, or a
            cancel be found, without decoding the whole log)
- `blobs`:  sha256 hex -> bytes (content-addressed; see `store.blobs`)
- `meta`:   small settings, e.g. the layout version
- `snapshots`: projection name + NUL + run id -> a projection's state (see `store.snapshots`)

A batch is one durable transaction: a killed writer leaves whole batches only.
"""

from __future__ import annotations

import functools
import itertools
import os
import struct
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, TypeVar

import lmdb

from engine.store.errors import (
    StoreDamagedError,
    StoreError,
    StoreFullError,
    StoreReadOnlyError,
    StoreWriteError,
)
from engine.store.files import check_data_file, check_trees
from engine.store.guard import DAMAGE, damage_as_error
from engine.store.opening import (
    READ_ONLY_ENV,
    disk_nearly_full,
    open_databases,
    open_env,
    read_only_wanted,
    size_limit,
)
from engine.store.records import CHECKED_FROM_KEY, RecordDamaged, seal, unpack_seq, unseal_many, unseal_run
from engine.store.snapshot_io import INDEX_PREFIX, TxnSnapshots, clear, last_of, listed_runs, mark_written

if TYPE_CHECKING:  # a reader never loads the keeper (its projections, the trial index) nor the checker
    from engine.store.snapshots import Keeper
    from engine.store.verify import CheckReport

_U64 = struct.Struct(">Q")
LAYOUT_VERSION = b"2"  # "1": records without checksums (still read; upgraded when opened to write)
DEFAULT_MAP_SIZE = 64 << 20
T = TypeVar("T")
READ_CHUNK = 16384
ALL_TREES = frozenset({"events", "runs", "blobs", "meta", "snapshots", "index"})
SMALL_TREES = frozenset({"meta", "snapshots"})  # walked at every open: what every command reads


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


def _run_key(run_id: str, seq: int) -> bytes:
    return run_id.encode() + b"\x00" + _U64.pack(seq)


class EventLog:
    """Thread-safe handle on the log. Writes run in a worker thread (see actors.writer)."""

    blocking_io = True  # durable commits wait on the disk

    def __init__(
        self,
        path: str | os.PathLike[str],
        map_size: int = DEFAULT_MAP_SIZE,
        readonly: bool | None = None,
        max_map_size: int | None = None,
    ) -> None:
        """Open (or create) the log at `path`, after checking its files (see `store.files`).

        `readonly`: None opens read-only when the files are not writable or $ENGINE_STORE_READONLY
        is set. `max_map_size`
        caps how far the map grows before an append fails as full (default:
        $ENGINE_STORE_MAX_SIZE, else no cap but the disk).
        """
        self.path = Path(path)
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
        self._env: lmdb.Environment | None = None
        self._dbs: list[object] | None = None
        self.checked_from: int | None = None
        self._snaps: object | None = None
        self._index_db: object | None = None
        # a writer walks every database's pages at open; a reader those it reads, when first read
        self._walked = set(SMALL_TREES) if self.readonly else set(ALL_TREES)
        if not check_data_file(self.path, None if not self.readonly else SMALL_TREES) and self.readonly:
            return  # another process is creating the store: it reads as empty until it is there
        with damage_as_error(self.path):
            self._env = open_env(self.path, map_size, self.readonly)
            try:
                self._ready()
            except BaseException:
                self._env.close()
                raise

    @functools.cached_property
    def _keeper(self) -> Keeper:
        """The writer's snapshot keeper, made at the first append: `engine list` and other readers
        never import it (it brings every kept projection and the trial index)."""
        from engine.store.snapshots import Keeper

        return Keeper()

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
                self._env.close()

    def __enter__(self) -> EventLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- writing -------------------------------------------------------------
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
            try:  # before the batch's own rows are in: the keeper reads what came before them
                self._keeper.advance(self._txn_snapshots(txn), batch, first)
            except BaseException:
                self._keeper.forget()  # the transaction is abandoned (then retried: a full map grows)
                raise
            pack = _U64.pack
            records = [(pack(first + i), seal(item[2])) for i, item in enumerate(batch)]
            cursor.putmulti(records, append=True)
            txn.cursor(db=self._runs).putmulti(_index_rows(batch, first))
            return seq + len(batch)

        try:
            return self._write(put_all)
        except (_NoRoom, lmdb.Error) as exc:
            # nothing of this batch was written; say what was, and how to go on
            run_id = batch[0][0] if batch else ""
            full = isinstance(exc, _NoRoom | lmdb.DiskError) or disk_nearly_full(self.path)
            failure = StoreFullError if full else StoreWriteError
            raise failure(run_id, len(self.run_index(run_id)), str(exc)) from None

    def _txn_snapshots(self, txn: lmdb.Transaction) -> TxnSnapshots:
        dbs = (self._events, self._runs, self._snaps, self._index_db)
        return TxnSnapshots(txn, dbs, self.checked_from, self.blobs_db)

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

    def put_snapshots(self, items: list[tuple[bytes, bytes]]) -> None:
        def put_all(txn: lmdb.Transaction) -> None:
            for key, value in items:
                txn.put(key, value, db=self._index_db if key.startswith(INDEX_PREFIX) else self._snaps)

        self._write(put_all)

    def clear_snapshots(self) -> None:
        """Drop every snapshot (`engine rebuild` writes them again from the log)."""
        self._keeper.forget()

        def clear_both(txn: lmdb.Transaction) -> None:
            clear(txn, self._snaps)
            clear(txn, self._index_db)

        self._write(clear_both)

    def _write(self, work: Callable[[lmdb.Transaction], T]) -> T:
        if self.readonly:
            raise StoreReadOnlyError(
                f"store {self.path} is read-only (files not writable, or {READ_ONLY_ENV} set)"
            )
        with self._lock, damage_as_error(self.path):
            while True:
                try:
                    with self._begin(write=True) as txn:
                        done = work(txn)
                        mark_written(txn, self._snaps)
                        return done
                except lmdb.MapFullError:
                    self._grow_map()

    def _grow_map(self) -> None:
        size = int(self._env.info()["map_size"])
        if self.max_map_size is not None and size * 2 > self.max_map_size:
            raise _NoRoom(f"the store reached its size limit of {self.max_map_size} bytes")
        self._env.set_mapsize(size * 2)

    def _begin(self, write: bool = False) -> lmdb.Transaction:
        try:
            return self._env.begin(write=write)
        except lmdb.MapResizedError:
            # another process grew the map: adopt its size
            self._env.set_mapsize(0)
            return self._env.begin(write=write)

    # --- reading -------------------------------------------------------------
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

    # --- safety ----------------------------------------------------------------
    def check(self, run_id: str | None = None) -> CheckReport:
        """Read everything (one run's events, when given) and list what is damaged.

        Of one consistent snapshot: the store is copied in one read transaction first (a live run
        goes on appending meanwhile), and the copy is what is verified, so a healthy live store
        never shows damage that is only a commit in progress. The copy's pages are verified byte by
        byte outside LMDB before its records are read through LMDB (see `store.verify`)."""
        import tempfile  # random and its hashes: only `engine check` copies the store

        from engine.store.verify import CheckReport, check_snapshot

        with tempfile.TemporaryDirectory(prefix="engine-check-") as snapshot:
            with self._lock, damage_as_error(self.path):
                if not self._ready():
                    return CheckReport()  # a store being created: nothing in it yet
                self._walk(tuple(ALL_TREES))  # the copy reads every page
                self._snapshot(snapshot)
            with damage_as_error(self.path):
                return check_snapshot(Path(snapshot), run_id, LAYOUT_VERSION)
        raise AssertionError("unreachable")

    def _snapshot(self, folder: str) -> None:
        try:
            self._env.copy(folder)
        except lmdb.Error as exc:
            if isinstance(exc, DAMAGE):
                raise
            import tempfile

            where = tempfile.gettempdir()
            raise StoreError(f"engine check copies the store to {where} first (set TMPDIR): {exc}") from None

    def backup(self, dest: Path) -> None:
        """A compacted copy of the whole store in `dest` (an existing empty folder), in one read
        transaction: a consistent snapshot even while a run appends."""
        with self._lock, damage_as_error(self.path):
            if not self._ready():
                raise StoreError(f"store {self.path} is being created by another process: back it up after")
            self._walk(tuple(ALL_TREES))  # the copy reads every page
            self._env.copy(str(dest), compact=True)

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

    def map_size(self) -> int:
        return 0 if self._env is None else int(self._env.info()["map_size"])
