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

LAYOUT_KEY = b"layout"
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


@contextmanager
def damage_as_error(path: Path) -> Iterator[None]:
    try:
        yield
    except DAMAGE as exc:
        raise StoreDamagedError(path, f"{type(exc).__name__}: {exc}") from None
    except lmdb.NotFoundError as exc:  # a named database missing from a store opened read-only
        raise StoreDamagedError(path, f"a database is missing ({exc})") from None


def check_layout(env: lmdb.Environment, meta_db: Any, events_db: Any, readonly: bool, version: bytes) -> None:
    """The header record: written when the store is created, checked at every open."""
    with env.begin(db=meta_db) as txn:
        found = txn.get(LAYOUT_KEY)
        empty = txn.stat(events_db)["entries"] == 0
    if found is None and not empty:
        raise StoreDamagedError(env.path(), "the header record (store format version) is missing")
    if found is None and not readonly:
        with env.begin(write=True, db=meta_db) as txn:
            txn.put(LAYOUT_KEY, version, overwrite=False)
    elif found is not None and found != version:
        shown = found.decode("ascii", "replace")
        raise StoreError(
            f"store {env.path()}: format version {shown!r}, this engine reads {version.decode()!r}"
        )
