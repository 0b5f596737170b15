"""Run bundles: one run's events and blobs in one compressed, checksummed file.

Layout (format 1; docs/bundle-format.md):

    b"ENGINE-BUNDLE\\n"          magic
    frames                       each: u32 big-endian length, then zlib(msgpack(Frame))
    b"SHA256" + 32 bytes         the digest of every byte before it

The first frame is the header, then events in order (each with its sequence number in the source
store), then blobs (their plain bytes: the receiving store packs them its own way), then an end frame
with the counts. A reader checks the digest over the whole file before it hands anything out, so a
truncated or damaged bundle is refused before a single event reaches a store.
"""

from __future__ import annotations

import hashlib
import struct
import zlib
from collections.abc import Iterable, Iterator
from typing import IO, TypeVar

import msgspec

from engine.events.errors import EngineError

MAGIC = b"ENGINE-BUNDLE\n"
FORMAT = 1
_TRAILER = b"SHA256"
_DIGEST_LEN = 32
# Caps a reader checks before it allocates (docs/bundle-format.md, "Caps"): a frame holds at most
# FRAME_BYTES once decompressed, so a zlib bomb is refused after FRAME_BYTES of output, whatever it
# claims; the writer keeps every frame under FRAME_FILL so any bundle it writes reads back
FRAME_BYTES = 32 << 20
FRAME_FILL = 8 << 20
_PACKED_LIMIT = FRAME_BYTES + FRAME_BYTES // 100 + 1024  # zlib's worst-case growth of FRAME_BYTES
EVENTS_PER_FRAME = 4096


class BundleError(EngineError, ValueError):
    """A file that is not a whole, intact bundle of a format this engine reads (exit 2)."""


class BundleHeader(msgspec.Struct, kw_only=True):
    format: int
    run_id: str
    experiment: str = ""
    status: str = ""
    started_ts: float = 0.0
    exported_ts: float = 0.0
    engine_version: str = ""
    events_digest: str = ""  # sha256 over the run's (tag, event bytes): the run's identity


class EventRow(msgspec.Struct, array_like=True):
    seq: int
    tag: str
    data: bytes


class BlobRow(msgspec.Struct, array_like=True):
    key: str
    data: bytes


class Frame(msgspec.Struct, kw_only=True, omit_defaults=True):
    header: BundleHeader | None = None
    events: list[EventRow] = []
    blobs: list[BlobRow] = []
    end_events: int = -1  # set only in the end frame
    end_blobs: int = -1


Row = TypeVar("Row", EventRow, BlobRow)


class Bundle(msgspec.Struct, kw_only=True):
    header: BundleHeader
    events: list[EventRow]
    blobs: list[BlobRow]


_encode = msgspec.msgpack.Encoder().encode
_decode_frame = msgspec.msgpack.Decoder(Frame).decode


def events_digest(rows: Iterable[tuple[str, bytes]]) -> str:
    """The identity of a run's content: two stores holding the same run agree on it."""
    digest = hashlib.sha256()
    for tag, data in rows:
        digest.update(struct.pack(">I", len(tag)) + tag.encode() + struct.pack(">Q", len(data)) + data)
    return digest.hexdigest()


def write_bundle(
    out: IO[bytes], header: BundleHeader, events: list[EventRow], blobs: Iterable[BlobRow]
) -> int:
    """Write a bundle to a binary file object; returns the bytes written."""
    digest = hashlib.sha256()
    written = 0

    def put(chunk: bytes) -> None:
        nonlocal written
        digest.update(chunk)
        out.write(chunk)
        written += len(chunk)

    def frame(value: Frame) -> None:
        body = zlib.compress(_encode(value), 3)
        put(struct.pack(">I", len(body)) + body)

    put(MAGIC)
    frame(Frame(header=header))
    for event_batch in _batches(events, EVENTS_PER_FRAME):
        frame(Frame(events=event_batch))
    blob_count = 0
    for batch in _batches(blobs, EVENTS_PER_FRAME // 4):
        frame(Frame(blobs=batch))
        blob_count += len(batch)
    frame(Frame(end_events=len(events), end_blobs=blob_count))
    final = _TRAILER + digest.digest()
    out.write(final)
    return written + len(final)


def read_bundle(source: IO[bytes], name: str) -> Bundle:
    """Read and verify a whole bundle; BundleError (naming `name`) for anything not intact."""
    data = source.read()
    if not data.startswith(MAGIC):
        raise BundleError(f"{name}: not an engine bundle (expected it to start with {MAGIC!r})")
    tail = len(_TRAILER) + _DIGEST_LEN
    if len(data) < len(MAGIC) + tail or data[-tail:-_DIGEST_LEN] != _TRAILER:
        raise BundleError(f"{name}: truncated bundle (no checksum at its end)")
    if hashlib.sha256(data[:-tail]).digest() != data[-_DIGEST_LEN:]:
        raise BundleError(f"{name}: damaged bundle (its checksum does not match its content)")
    return _assemble(_frames(data[len(MAGIC) : -tail], name), name)


def read_header(source: IO[bytes], name: str) -> BundleHeader:
    """The header alone (no checksum over the whole file): enough to choose which bundles to read."""
    start = source.read(len(MAGIC) + 4)
    if not start.startswith(MAGIC) or len(start) < len(MAGIC) + 4:
        raise BundleError(f"{name}: not an engine bundle (expected it to start with {MAGIC!r})")
    (length,) = struct.unpack(">I", start[len(MAGIC) :])
    body = source.read(length) if length <= _PACKED_LIMIT else b""
    header = next(_frames(struct.pack(">I", length) + body, name)).header
    if header is None:
        raise BundleError(f"{name}: damaged bundle (its first frame is not a header)")
    return _checked_header(header, name)


def _frames(body: bytes, name: str) -> Iterator[Frame]:
    pos = 0
    while pos < len(body):
        if pos + 4 > len(body):
            raise BundleError(f"{name}: damaged bundle (a frame is cut short)")
        (length,) = struct.unpack_from(">I", body, pos)
        chunk = body[pos + 4 : pos + 4 + length]
        if length > _PACKED_LIMIT:
            raise BundleError(f"{name}: {_over_cap(length)}")
        if len(chunk) != length:
            raise BundleError(f"{name}: damaged bundle (a frame is cut short)")
        try:
            yield _decode_frame(_inflate(chunk, name))
        except (zlib.error, msgspec.DecodeError) as exc:
            raise BundleError(f"{name}: damaged bundle (a frame does not decode: {exc})") from None
        pos += 4 + length


def _inflate(chunk: bytes, name: str) -> bytes:
    """A frame's bytes, never more than FRAME_BYTES of them: the output is capped as it is made."""
    inflater = zlib.decompressobj()
    plain = inflater.decompress(chunk, FRAME_BYTES + 1)
    if len(plain) > FRAME_BYTES or inflater.unconsumed_tail:
        raise BundleError(f"{name}: {_over_cap(len(plain))}")
    if not inflater.eof or inflater.unused_data:
        raise BundleError(f"{name}: damaged bundle (a frame's compressed stream is cut short or too long)")
    return plain


def _over_cap(size: int) -> str:
    return (
        f"refused: a frame holds over {FRAME_BYTES >> 20} MiB ({size:,} bytes seen), more than any bundle "
        "this engine writes (a decompression bomb or damage)"
    )


def _assemble(frames: Iterator[Frame], name: str) -> Bundle:
    first = next(frames, None)
    if first is None or first.header is None:
        raise BundleError(f"{name}: damaged bundle (its first frame is not a header)")
    header = _checked_header(first.header, name)
    events: list[EventRow] = []
    blobs: list[BlobRow] = []
    for frame in frames:
        if frame.end_events >= 0:
            if (frame.end_events, frame.end_blobs) != (len(events), len(blobs)):
                raise BundleError(f"{name}: damaged bundle (its counts do not match its content)")
            return Bundle(header=header, events=events, blobs=blobs)
        events.extend(frame.events)
        blobs.extend(frame.blobs)
    raise BundleError(f"{name}: truncated bundle (no end frame)")


def _checked_header(header: BundleHeader, name: str) -> BundleHeader:
    if header.format > FORMAT:
        raise BundleError(
            f"{name}: bundle format {header.format} is newer than this engine reads ({FORMAT}): upgrade"
        )
    return header


def _batches(items: Iterable[Row], count: int) -> Iterator[list[Row]]:
    """At most `count` rows and FRAME_FILL bytes a frame (one row alone when it is bigger); a row
    over the reader's cap is refused here, so no bundle is written that cannot be read back."""
    batch: list[Row] = []
    filled = 0
    for item in items:
        size = len(item.data)
        if size > FRAME_BYTES - (1 << 16):  # room for the row's own framing
            what = f"blob {item.key}" if isinstance(item, BlobRow) else f"event {item.seq} ({item.tag})"
            cap = FRAME_BYTES >> 20
            raise BundleError(f"{what} is {size:,} bytes: over what a bundle frame holds ({cap} MiB)")
        if batch and (len(batch) >= count or filled + size > FRAME_FILL):
            yield batch
            batch, filled = [], 0
        batch.append(item)
        filled += size
    if batch:
        yield batch
