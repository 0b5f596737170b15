"""Content-addressed blobs: events carry a sha256, the bytes live once in the log's `blobs` db.

Large blobs are zlib-compressed; the first byte says how a blob is stored.
"""

from __future__ import annotations

import hashlib
import zlib

from engine.store.contract import EventStore, StoreDamaged

_RAW = b"\x00"
_ZLIB = b"\x01"
COMPRESS_ABOVE = 4096


def blob_key(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def pack_blob(data: bytes) -> tuple[str, bytes]:
    """(key, stored bytes) ready to pass to `EventLog.append(blobs=...)`."""
    if len(data) > COMPRESS_ABOVE:
        packed = zlib.compress(data, 3)
        if len(packed) < len(data):
            return blob_key(data), _ZLIB + packed
    return blob_key(data), _RAW + data


def unpack_blob(stored: bytes) -> bytes:
    if stored[:1] == _ZLIB:
        return zlib.decompress(stored[1:])
    return stored[1:]


def read_blob(log: EventStore, key: str) -> bytes | None:
    """The blob's bytes, checked against the hash that names them: edited or damaged bytes are
    StoreDamaged, never shown (or regraded) as if the model had written them."""
    stored = log.get_blob(key)
    if stored is None:
        return None
    try:
        data = unpack_blob(stored)
    except zlib.error:
        raise StoreDamaged(f"store damaged: blob {key[:16]} does not decompress{_CHECK}") from None
    if blob_key(data) != key:
        raise StoreDamaged(f"store damaged: blob {key[:16]} does not match its content hash{_CHECK}")
    return data


_CHECK = " (`engine check` lists all damage; restore from an `engine backup`)"


def read_text(log: EventStore, key: str) -> str | None:
    data = read_blob(log, key)
    return None if data is None else data.decode("utf-8", errors="replace")
