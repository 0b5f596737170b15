"""POST a body, get the whole answer: a small HTTP/1.1 keep-alive pool for the model APIs.

The targets need one thing of HTTP: a request with a JSON body and its complete answer (no
streaming, redirects, cookies or proxies). httpx and httpcore do much more, and on a fast server
their layers (URL and header objects per request, h11's state machine, several awaits per call)
were the largest share of a trial's CPU, and their import a large part of the engine's start-up
(benchmarks/README.md#in-code-trials). Here the request's head is built once per pool; a request is one write
of head and body, and its answer is read and parsed in one pass (`wire`; what it reads: README.md beside it).
"""

from __future__ import annotations

import ssl
import urllib.parse
from collections.abc import Callable

import trio

from engine.actors.targets.http.body_stream import BodyStream, StreamSink, StreamTimeouts, drain
from engine.actors.targets.http.response import read_head, read_response
from engine.actors.targets.http.wire import ConnectError, Connection, HttpError, RemoteProtocolError, connect

__all__ = [
    "ConnectError", "ConnectTimeout", "HttpError", "HttpPool", "RemoteProtocolError", "StreamSink",
    "StreamTimeouts",
]  # fmt: skip


class UnsupportedProtocol(HttpError):
    pass


class TimeoutException(HttpError):
    pass


class ConnectTimeout(TimeoutException):
    pass


class PoolTimeout(TimeoutException):
    pass


class WriteTimeout(TimeoutException):
    pass


class ReadTimeout(TimeoutException):
    pass


class StreamTimeout(ReadTimeout):
    """A streamed answer's own limit ran out: the wait for its first byte, or a gap between pieces."""


_TIMEOUTS: dict[str, type[HttpError]] = {
    "pool": PoolTimeout, "connect": ConnectTimeout, "write": WriteTimeout, "read": ReadTimeout,
}  # fmt: skip


class Endpoint:
    """Where a pool's requests go, from its URL; a URL it cannot use is said at the first request."""

    def __init__(self, url: str) -> None:
        parts = urllib.parse.urlsplit(url)
        self.error = ""
        if parts.scheme not in ("http", "https") or not parts.hostname:
            self.error = f"cannot send to {url[:100]!r}: expected an http:// or https:// URL with a host"
        self.tls = parts.scheme == "https"
        self.host = parts.hostname or ""
        try:
            self.port = parts.port or (443 if self.tls else 80)
        except ValueError:
            self.port, self.error = 0, f"cannot send to {url[:100]!r}: bad port"
        self.path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self.authority = parts.netloc.rpartition("@")[2]


class HttpPool:
    """Up to `max_connections` keep-alive connections to one URL, all requests with the same headers."""

    def __init__(
        self,
        url: str,
        headers: dict[str, str],
        tls: Callable[[], ssl.SSLContext],
        max_connections: int = 4,
    ) -> None:
        self._endpoint = Endpoint(url)
        for name, value in headers.items():  # a line break would let a value forge other headers
            if any(c in name + value for c in "\r\n\0"):
                raise ValueError(f"header {name!r} holds a line break")
        lines = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        start = f"POST {self._endpoint.path} HTTP/1.1\r\nhost: {self._endpoint.authority}\r\n"
        self._head = f"{start}{lines}content-length: ".encode()
        self._tls = tls
        self._max = max_connections
        self._idle: list[Connection] = []
        self._open = 0
        self._freed = trio.lowlevel.ParkingLot()
        self._closed = False

    async def post(self, body: bytes, timeout_s: float) -> tuple[int, dict[str, str], bytes]:
        """Status, headers (names in lower case) and body; a wire failure raises an HttpError."""
        phase = ["pool"]
        with trio.move_on_after(timeout_s):
            conn = await self._send(body, phase)
            try:
                phase[0] = "read"
                status, headers, content, keep = await read_response(conn)
            except BaseException:
                self._discard(conn)
                raise
            self._release(conn, keep)
            if not conn.parked:  # every call gives the scheduler a turn, even one served at once
                await trio.lowlevel.checkpoint()
            return status, headers, content
        raise _TIMEOUTS[phase[0]](f"no {phase[0]} within {timeout_s:g} s")

    async def stream(
        self, body: bytes, limits: StreamTimeouts, sink: StreamSink
    ) -> tuple[int, dict[str, str], bytes]:
        """Status and headers of a streamed answer, whose body goes to `sink` piece by piece as it
        arrives; an error answer's (not 2xx) body is returned whole instead."""
        phase = ["pool"]
        with trio.move_on_after(limits.total_s):
            conn = await self._send(body, phase)
            sink.sent()
            try:
                phase[0] = "first byte"
                if limits.first_byte_s < limits.total_s:  # else the call's own deadline is the nearer
                    with trio.fail_after(limits.first_byte_s):
                        status, keep, headers, data = await read_head(conn)
                else:
                    status, keep, headers, data = await read_head(conn)
                phase[0] = "read"
                reader = BodyStream(conn, status, headers, data, keep)
                idle_s = limits.idle_s if limits.idle_s < limits.total_s else None
                content = await drain(reader, idle_s, sink if 200 <= status < 300 else None)
            except trio.TooSlowError:
                self._discard(conn)
                first = phase[0] == "first byte"
                what = "first byte" if first else "streamed piece"
                limit = f"{limits.first_byte_s:g} s (first_byte_timeout_s)" if first else (
                    f"{limits.idle_s:g} s (idle_timeout_s)"
                )  # fmt: skip
                raise StreamTimeout(f"no {what} within {limit}") from None
            except BaseException:
                self._discard(conn)
                raise
            self._release(conn, reader.keep)
            return status, headers, content
        raise _TIMEOUTS.get(phase[0], ReadTimeout)(f"no answer within {limits.total_s:g} s ({phase[0]})")

    async def _send(self, body: bytes, phase: list[str]) -> Connection:
        """A connection with the request written on it: what `post` and `stream` share. `phase[0]`
        follows where the call is, for the message of a deadline that runs out there."""
        conn = await self._acquire()
        if conn is None:
            phase[0] = "connect"
            conn = await self._connect()
        try:
            phase[0] = "write"
            await conn.send_all(b"%s%d\r\n\r\n%s" % (self._head, len(body), body))
        except BaseException:
            self._discard(conn)
            raise
        return conn

    async def _acquire(self) -> Connection | None:
        """An idle connection, or None once this pool may open one (waiting for a free slot)."""
        if self._endpoint.error:
            raise UnsupportedProtocol(self._endpoint.error)
        conn = self._idle_connection()
        while conn is None and self._open >= self._max:
            await self._freed.park()
            conn = self._idle_connection()
        if conn is None:
            self._open += 1
        return conn

    def _idle_connection(self) -> Connection | None:
        while self._idle:
            conn = self._idle.pop()
            if conn.reusable():
                conn.parked = False
                return conn
            self._discard(conn)
        return None

    async def _connect(self) -> Connection:
        """A new connection in the slot `_acquire` counted."""
        endpoint = self._endpoint
        try:
            return await connect(endpoint.host, endpoint.port, self._tls() if endpoint.tls else None)
        except BaseException:
            self._open -= 1
            self._freed.unpark()
            raise

    def _release(self, conn: Connection, keep: bool) -> None:
        if keep and not self._closed:
            self._idle.append(conn)
            self._freed.unpark()
        else:
            self._discard(conn)

    def _discard(self, conn: Connection) -> None:
        conn.close()
        self._open -= 1
        self._freed.unpark()

    async def aclose(self) -> None:
        self._closed = True
        while self._idle:
            self._discard(self._idle.pop())
        await trio.lowlevel.checkpoint()
