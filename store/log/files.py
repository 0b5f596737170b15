"""Validate an LMDB data file before mapping it: LMDB trusts its file, and a damaged one makes it
SIGBUS (a truncated file: pages past the end are mapped) or abort (a zeroed page fails an assert).

Read with plain file I/O and bounds checks, so nothing here can fault:
- the file is not empty (LMDB would silently start a new store on it);
- both meta pages carry LMDB's magic and data version;
- the file holds every page up to the last page the newest meta records;
- every page of every B-tree (the main one and each named database) has the page number and kind
  its parent says (see `store.lmdb_pages`).
"""

from __future__ import annotations

import fcntl
import os
import struct
from pathlib import Path
from typing import NamedTuple

from engine.store.errors import StoreDamagedError
from engine.store.log.lmdb_pages import walk_trees

MAGIC = 0xBEEFC0DE
DATA_VERSION = 1
PAGE_HEADER = 16  # pgno u64, pad u16, flags u16, lower u16, upper u16
P_META = 0x08
_META = struct.Struct("<IIQQ")  # magic, version, address, map size
_PAGE_SIZE_AT = PAGE_HEADER + 24  # the free db's md_pad holds the page size
_MAIN_ROOT_AT = PAGE_HEADER + 24 + 48 + 40  # mm_dbs[MAIN].md_root
_LAST_PAGE_AT = PAGE_HEADER + 24 + 96  # mm_last_pg, then mm_txnid
STABLE_TRIES = 4  # a live writer may commit while the trees are walked: read again


class Meta(NamedTuple):
    page_size: int
    last_page: int
    txnid: int
    main_root: int


def check_data_file(store: Path, trees: frozenset[str] | None = None) -> bool:
    """Raise StoreDamagedError unless `store`/data.mdb is absent (a new store) or looks whole.

    False: another process is creating the store right now (it holds LMDB's exclusive lock while it
    writes the first pages): not damage, and not a store to map yet. `trees`: the named databases to
    walk (default: all; see `check_trees` for the others, walked when first read)."""
    data = store / "data.mdb"
    try:
        size = data.stat().st_size
    except FileNotFoundError:
        return True
    try:
        if size == 0:
            raise StoreDamagedError(data, "the data file is empty (0 bytes), not a new store")
        _check_trees(data, trees)
    except StoreDamagedError:
        if _being_created(store):
            return False
        raise
    return True


def check_trees(store: Path, trees: frozenset[str]) -> None:
    """Raise StoreDamagedError unless the pages of these named databases are sound: a reader walks a
    database's pages before its first read of it, so a command costs the databases it reads."""
    _check_trees(store / "data.mdb", trees)


def _check_trees(data: Path, trees: frozenset[str] | None = None) -> None:
    with data.open("rb") as file:
        for _ in range(STABLE_TRIES):
            meta = newest_meta(file, data)
            problem = walk_trees(file, meta.page_size, meta.last_page, meta.main_root, only=trees)
            if problem is None:
                return
            if newest_meta(file, data).txnid == meta.txnid:
                raise StoreDamagedError(data, problem)
    # still changing after several tries: a live writer commits all the time, so it reads fine


def newest_meta(file: object, data: Path) -> Meta:
    head = _read(file, 0, 2 * 65536)
    # the size after the metas were read: a writer grows the file before it writes the meta that
    # points into the new pages, so a size taken earlier can be short of a meta committed since
    size = os.fstat(file.fileno()).st_size  # type: ignore[attr-defined]
    if len(head) < PAGE_HEADER + 160:
        raise StoreDamagedError(data, f"the data file is truncated ({size} bytes, not even a meta page)")
    first = _meta(head, 0, 0, data)
    page_size = first.page_size
    if len(head) < page_size + PAGE_HEADER + 160:
        raise StoreDamagedError(data, f"the data file is truncated ({size} bytes, one meta page)")
    newest = max(first, _meta(head, page_size, 1, data), key=lambda m: m.txnid)
    needed = (newest.last_page + 1) * page_size
    if size < needed:
        raise StoreDamagedError(
            data, f"the data file is truncated: {size} bytes, its last page needs {needed}"
        )
    return newest


def _meta(head: bytes, offset: int, number: int, data: Path) -> Meta:
    flags = struct.unpack_from("<H", head, offset + 10)[0]
    magic, version, _, _ = _META.unpack_from(head, offset + PAGE_HEADER)
    if not flags & P_META or magic != MAGIC:
        raise StoreDamagedError(data, f"meta page {number} is not an LMDB meta page (zeroed or overwritten)")
    if version != DATA_VERSION:
        raise StoreDamagedError(data, f"meta page {number} has LMDB data version {version}, not 1")
    page_size = struct.unpack_from("<I", head, offset + _PAGE_SIZE_AT)[0]
    if page_size < 512 or page_size & (page_size - 1) or (number == 0 and page_size > 65536):
        raise StoreDamagedError(data, f"meta page {number} records a page size of {page_size}")
    last_page, txnid = struct.unpack_from("<QQ", head, offset + _LAST_PAGE_AT)
    main_root = struct.unpack_from("<Q", head, offset + _MAIN_ROOT_AT)[0]
    return Meta(page_size, last_page, txnid, main_root)


def _read(file: object, offset: int, length: int) -> bytes:
    return os.pread(file.fileno(), length, offset)  # type: ignore[attr-defined]


def _being_created(store: Path) -> bool:
    """Whether another process holds LMDB's exclusive open lock (it writes the metas under it)."""
    lock_file = store / "lock.mdb"
    try:
        fd = os.open(lock_file, os.O_RDONLY)
    except OSError:
        return False
    try:
        probe = struct.pack("hhqqi", fcntl.F_WRLCK, os.SEEK_SET, 0, 1, 0)
        found = fcntl.fcntl(fd, fcntl.F_GETLK, probe)
        return struct.unpack("hhqqi", found)[0] == fcntl.F_WRLCK
    finally:
        os.close(fd)


def tree_pages(store: Path) -> tuple[int, dict[str, list[int]]]:
    """(page size, page numbers of each B-tree by database name): where to look, or to damage."""
    data = store / "data.mdb"
    with data.open("rb") as file:
        meta = newest_meta(file, data)
        seen: dict[str, list[int]] = {}
        walk_trees(file, meta.page_size, meta.last_page, meta.main_root, seen)
    return meta.page_size, seen
