"""Content-addressed blobs: events carry a sha256, the bytes live once in the log's `blobs` db.

Large blobs are zlib-compressed; the first byte says how a blob is stored.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Callable, Iterable

from engine.store.contract import EventStore
from engine.store.errors import StoreDamagedError

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


def pack_pieces(pieces: Callable[[], Iterable[bytes]]) -> tuple[str, bytes]:
    """`pack_blob` of the pieces' bytes joined, without joining them: hashed and compressed as they
    come (zlib's stream gives the bytes of compressing them whole; tests/test_report_blob.py). When
    they would be stored uncompressed (few, or not smaller compressed) they are made again, joined."""
    digest, squeeze, size = hashlib.sha256(), zlib.compressobj(3), 0
    packed = [_ZLIB]
    for piece in pieces():
        digest.update(piece)
        packed.append(squeeze.compress(piece))
        size += len(piece)
    packed.append(squeeze.flush())
    stored = b"".join(packed)
    if size <= COMPRESS_ABOVE or len(stored) - 1 >= size:
        return pack_blob(b"".join(pieces()))
    return digest.hexdigest(), stored


def unpack_blob(stored: bytes) -> bytes:
    if stored[:1] == _ZLIB:
        return zlib.decompress(stored[1:])
    return stored[1:]


def read_blob(log: EventStore, key: str) -> bytes:
    """A blob's bytes, checked against their content hash: edited bytes are damage, never output. A
    blob is written in the same transaction as the event naming it, so a missing one is damage too
    (never "no output")."""
    stored = log.get_blob(key)
    if stored is None:
        where = getattr(log, "path", "the store")
        raise StoreDamagedError(where, f"blob {key[:16]} is missing (an event refers to it)")
    data, problem = _checked(key, stored)
    if problem is not None:
        raise StoreDamagedError(getattr(log, "path", "the store"), problem)
    return data


def checked_blob(key: str, stored: bytes) -> bytes | None:
    """A stored blob's bytes, unpacked once; None when they do not unpack or match their key."""
    data, problem = _checked(key, stored)
    return None if problem is not None else data


def blob_problem(key: str, stored: bytes) -> str | None:
    """What is wrong with a stored blob (None: it unpacks and matches its key)."""
    return _checked(key, stored)[1]


def _checked(key: str, stored: bytes) -> tuple[bytes, str | None]:
    """The blob's bytes and what is wrong with them: unpacked once (a report of a big run is MBs)."""
    try:
        data = unpack_blob(stored)
    except zlib.error as exc:
        return b"", f"blob {key[:16]} does not decompress ({exc})"
    if stored[:1] not in (_RAW, _ZLIB) or blob_key(data) != key:
        return b"", f"blob {key[:16]} does not match its content hash"
    return data, None


def read_text(log: EventStore, key: str) -> str:
    return read_blob(log, key).decode("utf-8", errors="replace")
