"""How the log opens its files: read-only or not, how large it may grow, what a failed write means."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import lmdb

from engine.store.errors import StoreDamagedError, StoreError
from engine.store.log.guard import check_layout
from engine.store.log.kept_io import COMPLETE

READ_ONLY_ENV = "ENGINE_STORE_READONLY"
MAX_SIZE_ENV = "ENGINE_STORE_MAX_SIZE"


def size_limit() -> int | None:
    """$ENGINE_STORE_MAX_SIZE (bytes): how large the store may grow before appends fail as full."""
    text = os.environ.get(MAX_SIZE_ENV, "")
    if not text.isdigit() or int(text) <= 0:
        if text:
            raise StoreError(f"{MAX_SIZE_ENV}: expected a size in bytes, got {text!r}")
        return None
    return int(text)


def read_only_wanted(path: Path) -> bool:
    """ENGINE_STORE_READONLY=1 (never write: a backup, a copy), or files engine may not write."""
    return os.environ.get(READ_ONLY_ENV, "") not in ("", "0") or not _writable(path)


def _writable(path: Path) -> bool:
    """Whether engine may write there: a new store's nearest existing folder, else the files."""
    if not (path / "data.mdb").exists():
        existing = next((p for p in (path, *path.parents) if p.exists()), path)
        return os.access(existing, os.W_OK)
    return all(os.access(path / name, os.W_OK) for name in (".", "data.mdb"))


def open_env(path: Path, map_size: int, readonly: bool) -> lmdb.Environment:
    # read-only: take part in the reader table when the lock file can be written (a live writer
    # then keeps our pages); on read-only media there is no writer to keep them from
    lock = not readonly or os.access(path / "lock.mdb", os.W_OK)
    return lmdb.open(
        str(path),
        map_size=map_size,
        max_dbs=8,
        max_readers=256,
        readahead=False,
        readonly=readonly,
        lock=lock,
    )


NEARLY_FULL = 16 << 20  # free bytes below which a failed commit is taken for a full disk


def disk_nearly_full(path: Path) -> bool:
    # LMDB reports a short write on a full disk as EIO ("Input/output error"), not ENOSPC
    try:
        stats = os.statvfs(path)
    except OSError:
        return False
    return stats.f_bavail * stats.f_frsize < NEARLY_FULL


DATABASES = (b"events", b"runs", b"blobs", b"meta")
SNAPSHOTS = b"snapshots"  # projection snapshots (see `store.snapshots`): absent from older stores
INDEX = b"index"  # the trial index (see `store.trial_index`): absent from older stores


def open_databases(
    env: lmdb.Environment, readonly: bool, version: bytes
) -> tuple[list[Any] | None, int | None]:
    """The named databases and where checksums start (see `guard.check_layout`).

    Writable: created with the header record in one transaction, so a reader sees a store either
    without any of them (being created: it reads as empty) or with all of them. Read-only: None
    while the main database is still empty (another process is creating the store)."""
    path = env.path()
    if readonly:
        with env.begin() as txn:
            if txn.stat()["entries"] == 0:
                return None, None
        try:
            dbs = [env.open_db(name, create=False) for name in DATABASES]
        except lmdb.NotFoundError as exc:  # some named databases and not others: not a store we made
            raise StoreDamagedError(path, f"a database is missing ({exc})") from None
        for optional in (SNAPSHOTS, INDEX):
            try:
                dbs.append(env.open_db(optional, create=False))
            except lmdb.NotFoundError:  # a store written before them: every read folds the log
                dbs.append(None)
        with env.begin() as txn:
            return dbs, check_layout(txn, dbs[3], dbs[0], True, version, path)
    with env.begin(write=True) as txn:
        dbs = [env.open_db(name, txn=txn, create=True) for name in (*DATABASES, SNAPSHOTS, INDEX)]
        if txn.stat(dbs[0])["entries"] == 0 and txn.stat(dbs[4])["entries"] == 0:
            txn.put(COMPLETE, b"1", db=dbs[4])  # a new store: the snapshots will list every run
        return dbs, check_layout(txn, dbs[3], dbs[0], False, version, path)
