"""One response's body piece by piece, as it arrives: what a streamed answer (server-sent events) needs.

The framing is `response`'s (README.md beside it), read incrementally: a chunk's bytes are handed on as
they come in, not when the chunk is whole, so a token the server flushed is seen the moment it lands.
`tests/test_http_stream_h11.py` holds the pieces, joined, equal to h11's body on the same generated
responses `read_response` is held to.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import NamedTuple, Protocol

import trio

from engine.actors.targets.http.response import chunk_size, more, read_trailers
from engine.actors.targets.http.wire import Connection, RemoteProtocolError


class StreamTimeouts(NamedTuple):
    """A streamed answer's deadlines: the whole call, the wait from the request sent to the answer's
    head, and the longest gap between two pieces of its body (the wait for the first token included)."""

    total_s: float
    first_byte_s: float
    idle_s: float


class StreamSink(Protocol):
    """Where a streamed answer goes: told when the request has been written, then each body piece."""

    def sent(self) -> None: ...

    def piece(self, data: bytes) -> None: ...


class BodyStream:
    """The body after a head (`read_head`); `keep` says, once `pieces()` has ended, whether the
    connection may serve another request."""

    def __init__(
        self, conn: Connection, status: int, headers: dict[str, str], data: bytes, keep: bool
    ) -> None:
        self._conn = conn
        self._status = status
        self._headers = headers
        self._data = data
        self._keep = keep
        self.keep = False  # until the body has been read to its end

    def pieces(self) -> AsyncIterator[bytes]:
        """Non-empty pieces of the body in order; a body cut short raises RemoteProtocolError. One
        generator, not one wrapping another: a streamed answer is read a few bytes at a time."""
        if self._status in (204, 304):
            return self._sized(0)
        if "transfer-encoding" in self._headers:
            return self._chunked()
        if (length := self._headers.get("content-length")) is not None:
            return self._sized(int(length))
        return self._to_the_end()

    def _ended(self, rest: bytes) -> None:
        """The body has been read; bytes after it mean the connection is not reused."""
        self.keep = self._keep and not rest

    async def _to_the_end(self) -> AsyncIterator[bytes]:
        if self._data:
            yield self._data
        while chunk := await self._conn.receive():
            yield chunk

    async def _sized(self, length: int) -> AsyncIterator[bytes]:
        data = self._data
        while True:
            piece, data = data[:length], data[length:]
            if piece:
                yield piece
            length -= len(piece)
            if not length:
                self._ended(data)
                return
            data = await more(self._conn, "in the middle of the answer's body")

    async def _chunked(self) -> AsyncIterator[bytes]:
        buffer, pos, conn = bytearray(self._data), 0, self._conn
        while True:
            whole, pos = _whole_chunks(buffer, pos)  # every chunk already here, as one piece
            if whole:
                yield whole
            while (eol := buffer.find(b"\r\n", pos)) < 0:
                buffer += await more(conn, "in a chunked body")
            size, pos = chunk_size(bytes(buffer[pos:eol])), eol + 2
            if size == 0:
                self._ended(await read_trailers(conn, buffer, pos))
                return
            while size:  # a chunk still arriving: hand on what has come of it, then wait for the rest
                if pos == len(buffer):
                    buffer, pos = bytearray(await more(conn, "in a chunked body")), 0
                piece = bytes(buffer[pos : pos + size])
                pos, size = pos + len(piece), size - len(piece)
                yield piece
            while len(buffer) < pos + 2:
                buffer += await more(conn, "in a chunked body")
            if buffer[pos : pos + 2] != b"\r\n":  # a chunk longer than it said it was
                raise RemoteProtocolError("a chunk does not end where its size says")
            del buffer[: pos + 2]
            pos = 0


def _whole_chunks(buffer: bytearray, pos: int) -> tuple[bytes, int]:
    """The data of the whole chunks from `pos` on (up to the last chunk or one not yet whole), joined,
    and where they end: a server that flushed several events in one read is one piece, not several."""
    parts = []
    while (eol := buffer.find(b"\r\n", pos)) >= 0:
        size = chunk_size(bytes(buffer[pos:eol]))
        end = eol + 2 + size
        if size == 0 or len(buffer) < end + 2:
            break
        if buffer[end : end + 2] != b"\r\n":
            raise RemoteProtocolError("a chunk does not end where its size says")
        parts.append(buffer[eol + 2 : end])
        pos = end + 2
    return b"".join(parts), pos


_UNBOUNDED = contextlib.nullcontext()  # no gap limit nearer than the call's own deadline


async def drain(reader: BodyStream, idle_s: float | None, sink: StreamSink | None) -> bytes:
    """Hand each piece to `sink` (with at most `idle_s` between pieces, if set); without one, the
    whole body. One cancel scope whose deadline moves, not one per piece: a streamed answer has many."""
    parts: list[bytes] = []
    pieces = reader.pieces()
    try:
        gap = _UNBOUNDED if idle_s is None else trio.CancelScope()
        with gap:
            while True:
                if idle_s is not None:
                    gap.deadline = trio.current_time() + idle_s  # type: ignore[union-attr]
                piece = await anext(pieces, None)
                if piece is None:
                    return b"".join(parts)
                if sink is None:
                    parts.append(piece)
                else:
                    sink.piece(piece)
        raise trio.TooSlowError
    finally:
        await pieces.aclose()  # a reader stopped mid-body (a timeout, a cut) ends here, not in a finalizer
