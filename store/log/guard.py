"""Turn what a damaged or full store raises into the store's own errors (one clear line each)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import lmdb
import msgspec

from engine.events.codec import EventDecodeError, decode
from engine.events.kinds import AnyEvent
from engine.store.errors import StoreDamagedError, StoreError
from engine.store.log.files import check_trees
from engine.store.log.records import CHECKED_FROM_KEY, pack_seq, unpack_seq

LAYOUT_KEY = b"layout"
LEGACY_LAYOUT = b"1"  # records without checksums
# what LMDB reports for pages or records that are not what they should be
DAMAGE = (
    lmdb.CorruptedError,
    lmdb.PageNotFoundError,
    lmdb.InvalidError,
    lmdb.VersionMismatchError,
    lmdb.PanicError,
    lmdb.BadValsizeError,
    lmdb.IncompatibleError,
    UnicodeDecodeError,
)


# what decoding stored bytes raises when they were changed on disk
DECODE_DAMAGE = (msgspec.DecodeError, msgspec.ValidationError, EventDecodeError, UnicodeDecodeError)


def decode_stored(log: object, seq: int, data: bytes | memoryview) -> AnyEvent:
    """An event read back from a store: bytes that no longer decode are damage, named by seq."""
    try:
        return decode(data)
    except DECODE_DAMAGE as exc:
        where = getattr(log, "path", "the store")
        raise StoreDamagedError(where, f"event {seq} does not decode ({type(exc).__name__}: {exc})") from None


def decode_of_run(log: object, seq: int, data: bytes | memoryview, run_id: str) -> AnyEvent:
    """An event the run index listed under `run_id`: one of another run means the index is damaged
    (each record is checksummed; the index rows pointing at them are checked against them here)."""
    event = decode_stored(log, seq, data)
    if event.run_id != run_id:
        where = getattr(log, "path", "the store")
        raise StoreDamagedError(where, f"run index: {run_id} lists event {seq}, which is {event.run_id}'s")
    return event


@contextmanager
def damage_as_error(path: Path) -> Iterator[None]:
    try:
        yield
    except DAMAGE as exc:
        raise StoreDamagedError(path, f"{type(exc).__name__}: {exc}") from None
    except lmdb.NotFoundError as exc:  # a named database missing from a store opened read-only
        raise StoreDamagedError(path, f"a database is missing ({exc})") from None


def check_layout(
    txn: lmdb.Transaction, meta_db: Any, events_db: Any, readonly: bool, version: bytes, path: object
) -> int | None:
    """The header record: written when the store is created, checked at every open, inside `txn` (a
    write transaction unless `readonly`). Returns the first sequence number whose record carries a
    checksum (None: a store from before checksums, opened read-only).

    A store of the layout before checksums (b"1") opened for writing is upgraded in `txn`: its
    records so far stay bare, every later one is checksummed."""
    found = txn.get(LAYOUT_KEY, db=meta_db)
    checked_from = unpack_seq(txn.get(CHECKED_FROM_KEY, db=meta_db))
    if found == version and checked_from is not None:
        return checked_from  # the common case, read without touching the events (a reader walks
        # a database's pages before it first reads it: see `EventLog`)
    if readonly:  # a writer has walked every page already
        check_trees(Path(str(path)), frozenset({"events"}))
    cursor = txn.cursor(db=events_db)
    last = unpack_seq(cursor.key()) or 0 if cursor.last() else 0
    if found is None and last:
        raise StoreDamagedError(path, "the header record (store format version) is missing")
    if found is not None and found not in (LEGACY_LAYOUT, version):
        shown = found.decode("ascii", "replace")
        raise StoreError(f"store {path}: format version {shown!r}, this engine reads {version.decode()!r}")
    if found == version and checked_from is None:
        raise StoreDamagedError(path, "the record saying where checksums start is missing")
    if found != version and not readonly:
        checked_from = last + 1
        txn.put(CHECKED_FROM_KEY, pack_seq(checked_from), db=meta_db)
        txn.put(LAYOUT_KEY, version, db=meta_db)
    return checked_from
