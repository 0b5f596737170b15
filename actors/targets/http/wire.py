"""HTTP/1.1 on one connection: the socket (plain or TLS) and reading one response off it.

A plain connection talks to its non-blocking socket directly: a request is one `send` and, once
the socket is readable, a local server's answer is usually one `recv`, with a single park in trio's
I/O wait between them (trio's stream layers add a conflict detector and two scheduler round trips
to each call). TLS goes through trio's SSLStream.
"""

from __future__ import annotations

import re
import select
import socket
import ssl

import trio

from engine.events.errors import EngineError

MAX_HEAD = 64 * 1024  # a response's status line and headers; longer is a broken server
READ_SIZE = 64 * 1024
_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # a header's name (RFC 9110 5.1)
_STATUS = re.compile(rb"HTTP/1\.([0-9]) ([0-9]{3})(?: .*)?")
_CHUNK_SIZE = re.compile(rb"([0-9A-Fa-f]{1,20})(?:;.*)?[ \t]*")  # extensions are read past, unused


class HttpError(EngineError):
    """A failure on the wire (the server's own error answers are responses, not these). The targets
    turn it into a TargetError of the right class; one that escaped would be an infrastructure fault."""

    exit_code = 1


class ConnectError(HttpError):
    pass


class RemoteProtocolError(HttpError):
    """The server broke HTTP/1.1 or closed the connection before its answer was complete."""


class Connection:
    """One keep-alive connection; `parked` says whether a call waited in trio's I/O (a checkpoint)."""

    def __init__(self, sock: socket.socket, stream: trio.SSLStream[trio.SocketStream] | None) -> None:
        self.sock = sock
        self.stream = stream
        self.parked = False

    async def send_all(self, data: bytes) -> None:
        if self.stream is not None:
            self.parked = True
            await self.stream.send_all(data)
            return
        view, sent = memoryview(data), 0
        while True:
            try:
                sent += self.sock.send(view[sent:])
            except BlockingIOError:
                pass
            if sent >= len(data):
                return
            self.parked = True
            await trio.lowlevel.wait_writable(self.sock)

    async def receive(self) -> bytes:
        """Some bytes, or b"" once the server has closed the connection."""
        if self.stream is not None:
            self.parked = True
            try:
                return await self.stream.receive_some(READ_SIZE)
            except trio.BrokenResourceError as exc:
                raise RemoteProtocolError(f"the connection broke: {exc.__cause__ or exc}") from exc
        while True:
            try:
                return self.sock.recv(READ_SIZE)
            except BlockingIOError:
                self.parked = True
                await trio.lowlevel.wait_readable(self.sock)

    def reusable(self) -> bool:
        """An idle connection with nothing to read: readable means the server closed it (or sent
        bytes nobody asked for), so it is not used again."""
        try:
            if self.stream is None:  # a plain socket: one non-blocking peek, no poll object per request
                self.sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
                return False
            poller = select.poll()
            poller.register(self.sock, select.POLLIN)
            return not poller.poll(0)
        except BlockingIOError:
            return True
        except (OSError, ValueError):
            return False

    def close(self) -> None:
        if self.sock.fileno() >= 0:
            trio.lowlevel.notify_closing(self.sock)
        self.sock.close()


async def connect(host: str, port: int, tls: ssl.SSLContext | None) -> Connection:
    try:
        stream = await trio.open_tcp_stream(host, port)
    except OSError as exc:
        raise ConnectError(str(exc)) from exc
    if tls is None:  # the socket leaves trio's wrapper: this module drives it itself
        sock = socket.socket(fileno=stream.socket.detach())
        sock.setblocking(False)
        return Connection(sock, None)
    secure = trio.SSLStream(stream, tls, server_hostname=host, https_compatible=True)
    try:
        await secure.do_handshake()
    except trio.BrokenResourceError as exc:
        await trio.aclose_forcefully(stream)
        raise ConnectError(f"TLS handshake with {host}: {exc.__cause__ or exc}") from exc
    return Connection(stream.socket, secure)  # type: ignore[arg-type]  # trio's socket has fileno()


Response = tuple[int, dict[str, str], bytes, bool]  # status, headers, body, keep the connection


async def read_response(conn: Connection) -> Response:
    data = b""
    while True:
        while (end := data.find(b"\r\n\r\n")) < 0:
            if len(data) > MAX_HEAD:
                raise RemoteProtocolError("the response's headers are too long")
            data += await _more(conn, "before its answer" if not data else "in the answer's headers")
        status, keep, headers = parse_head(data[:end])
        data = data[end + 4 :]
        if status == 101:  # the engine never asks to switch protocols
            raise RemoteProtocolError("101 Switching Protocols, but no upgrade was asked for")
        if not 100 <= status < 200:  # an interim answer (100 Continue) is followed by the real one
            break
    if status in (204, 304):
        body = b""
    elif "transfer-encoding" in headers:  # parse_head let only "chunked" through
        body, data = await read_chunked(conn, data)
    elif (length := headers.get("content-length")) is not None:
        body, data = await read_length(conn, data, int(length))
    else:  # no length: the body runs to the end of the connection
        parts = [data]
        while chunk := await conn.receive():
            parts.append(chunk)
        body, data, keep = b"".join(parts), b"", False
    return status, headers, body, keep and not data


def parse_head(head: bytes) -> tuple[int, bool, dict[str, str]]:
    """Status, whether the connection may be kept, and the headers (names in lower case; a repeated
    header's values joined by ", ", as httpx gives them)."""
    status_line, *lines = head.split(b"\r\n")
    matched = _STATUS.fullmatch(status_line)
    if matched is None or matched[2] < b"100":
        raise RemoteProtocolError(f"not an HTTP/1.1 status line: {status_line[:60]!r}")
    headers: dict[str, str] = {}
    for line in lines:
        name, colon, value = line.partition(b":")
        if not colon or _TOKEN.fullmatch(name) is None:  # no space before the colon, no folded lines
            raise RemoteProtocolError(f"not a header line: {line[:60]!r}")
        key, text = name.lower().decode("latin-1"), value.strip(b" \t").decode(errors="replace")
        if key == "content-length":  # "12, 12" or twice the same line: one length (as proxies merge)
            text = one_length(f"{headers[key]}, {text}" if key in headers else text)
        elif key == "transfer-encoding":  # gzip and the like would hand the target bytes it cannot read
            if key in headers or (text := text.lower()) != "chunked":
                raise RemoteProtocolError(f"transfer-encoding {text[:40]!r}: only chunked is read")
        elif key in headers:
            text = f"{headers[key]}, {text}"
        headers[key] = text
    # HTTP/1.0's keep-alive extension is not trusted: such a server's connection is used once
    tokens = headers.get("connection", "").lower().split(",")
    keep = matched[1] != b"0" and all(token.strip(" \t") != "close" for token in tokens)
    return int(matched[2]), keep, headers


def one_length(value: str) -> str:
    """A content-length's one value; differing ones (a body two readers would cut differently) are refused."""
    values = {part.strip(" \t") for part in value.split(",")}
    if len(values) != 1 or not (number := values.pop()).isascii() or not number.isdigit():
        raise RemoteProtocolError(f"content-length {value[:40]!r} is not one number")
    return number


async def read_length(conn: Connection, data: bytes, length: int) -> tuple[bytes, bytes]:
    if len(data) >= length:  # the usual case: the whole answer came with its headers
        return data[:length], data[length:]
    buffer = bytearray(data)
    while len(buffer) < length:
        buffer += await _more(conn, "in the middle of the answer's body")
    return bytes(buffer[:length]), bytes(buffer[length:])


async def read_chunked(conn: Connection, data: bytes) -> tuple[bytes, bytes]:
    buffer, body, pos = bytearray(data), bytearray(), 0
    while True:
        while (eol := buffer.find(b"\r\n", pos)) < 0:
            buffer += await _more(conn, "in a chunked body")
        size_line = bytes(buffer[pos:eol])
        if (sized := _CHUNK_SIZE.fullmatch(size_line)) is None:  # int(_, 16) alone would take "0x1f"
            raise RemoteProtocolError(f"bad chunk size {size_line[:20]!r}")
        size, pos = int(sized[1], 16), eol + 2
        if size == 0:
            break
        while len(buffer) < pos + size + 2:
            buffer += await _more(conn, "in a chunked body")
        if buffer[pos + size : pos + size + 2] != b"\r\n":  # a chunk longer than it said it was
            raise RemoteProtocolError("a chunk does not end where its size says")
        body += buffer[pos : pos + size]
        pos += size + 2
    while True:  # trailers, up to the empty line that ends the message: read past, unused
        while (eol := buffer.find(b"\r\n", pos)) < 0:
            buffer += await _more(conn, "in a chunked body's trailers")
        if eol == pos:
            return bytes(body), bytes(buffer[pos + 2 :])
        name, colon, _ = bytes(buffer[pos:eol]).partition(b":")
        if not colon or _TOKEN.fullmatch(name) is None:
            raise RemoteProtocolError(f"not a trailer line: {bytes(buffer[pos:eol])[:60]!r}")
        pos = eol + 2


async def _more(conn: Connection, where: str) -> bytes:
    chunk = await conn.receive()
    if not chunk:
        raise RemoteProtocolError(f"the server closed the connection {where}")
    return chunk
