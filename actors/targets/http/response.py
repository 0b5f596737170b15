"""Reading one HTTP/1.1 response off a connection: the status line, the headers and the body as its
framing says (README.md beside this module: the subset read, and what is refused). A local server's
whole answer usually comes in one read, so the common case parses it in one pass.
"""

from __future__ import annotations

import re

from engine.actors.targets.http.wire import Connection, RemoteProtocolError

MAX_HEAD = 64 * 1024  # a response's status line and headers; longer is a broken server
_TOKEN_CHARS = b"!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_STATUS = re.compile(rb"HTTP/1\.([0-9]) ([0-9]{3})(?: .*)?")
_CHUNK_SIZE = re.compile(rb"([0-9A-Fa-f]{1,20})(?:;.*)?[ \t]*")  # extensions are read past, unused


Response = tuple[int, dict[str, str], bytes, bool]  # status, headers, body, keep the connection


async def read_response(conn: Connection) -> Response:
    status, keep, headers, data = await read_head(conn)
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


async def read_head(conn: Connection) -> tuple[int, bool, dict[str, str], bytes]:
    """The final answer's status, keep-alive, headers, and the bytes read past its head (interim 1xx
    answers read past)."""
    data = b""
    while True:
        while (end := data.find(b"\r\n\r\n")) < 0:
            if len(data) > MAX_HEAD:
                raise RemoteProtocolError("the response's headers are too long")
            data += await more(conn, "before its answer" if not data else "in the answer's headers")
        status, keep, headers = parse_head(data[:end])
        data = data[end + 4 :]
        if status == 101:  # the engine never asks to switch protocols
            raise RemoteProtocolError("101 Switching Protocols, but no upgrade was asked for")
        if not 100 <= status < 200:  # an interim answer (100 Continue) is followed by the real one
            return status, keep, headers, data


def parse_head(head: bytes) -> tuple[int, bool, dict[str, str]]:
    """Status, whether the connection may be kept, and the headers (names in lower case; a repeated
    header's values joined by ", ", as httpx gives them)."""
    status_line, _, lines = head.partition(b"\r\n")
    matched = _STATUS.fullmatch(status_line)
    if matched is None or matched[2] < b"100":
        raise RemoteProtocolError(f"not an HTTP/1.1 status line: {status_line[:60]!r}")
    headers: dict[str, str] = {}
    for line in lines.split(b"\r\n") if lines else ():
        name, colon, value = line.partition(b":")
        # a header's name is a token (RFC 9110 5.1): no space before the colon, no folded line
        if not colon or not name or name.translate(None, _TOKEN_CHARS) or b"\r" in value:
            raise RemoteProtocolError(f"not a header line: {line[:60]!r}")
        key, text = name.lower().decode("latin-1"), value.strip(b" \t").decode(errors="replace")
        if key in headers or key in _FRAMING:
            text = _framing(key, headers.get(key), text)
        headers[key] = text
    # HTTP/1.0's keep-alive extension is not trusted: such a server's connection is used once
    keep = matched[1] != b"0" and not _closes(headers.get("connection"))
    return int(matched[2]), keep, headers


def _closes(connection: str | None) -> bool:
    """Whether a connection header lists "close" (a token: "closed" is not it)."""
    if connection is None or "close" not in (lowered := connection.lower()):
        return False
    return any(token.strip(" \t") == "close" for token in lowered.split(","))


_FRAMING = ("content-length", "transfer-encoding")


def _framing(key: str, before: str | None, text: str) -> str:
    """A framing header's one value, or a repeated header's values joined."""
    if key == "content-length":  # "12, 12" or twice the same line: one length (as proxies merge)
        return one_length(text if before is None else f"{before}, {text}")
    if key == "transfer-encoding":  # gzip and the like would hand the target bytes it cannot read
        if before is not None or (text := text.lower()) != "chunked":
            raise RemoteProtocolError(f"transfer-encoding {text[:40]!r}: only chunked is read")
        return text
    return f"{before}, {text}"


def one_length(value: str) -> str:
    """A content-length's one value; differing ones (a body two readers would cut differently) are refused."""
    if value.isascii() and value.isdigit():  # the usual case: one plain number
        return value
    values = {part.strip(" \t") for part in value.split(",")}
    if len(values) != 1 or not (number := values.pop()).isascii() or not number.isdigit():
        raise RemoteProtocolError(f"content-length {value[:40]!r} is not one number")
    return number


async def read_length(conn: Connection, data: bytes, length: int) -> tuple[bytes, bytes]:
    if len(data) >= length:  # the usual case: the whole answer came with its headers
        return data[:length], data[length:]
    buffer = bytearray(data)
    while len(buffer) < length:
        buffer += await more(conn, "in the middle of the answer's body")
    return bytes(buffer[:length]), bytes(buffer[length:])


async def read_chunked(conn: Connection, data: bytes) -> tuple[bytes, bytes]:
    buffer, body, pos = bytearray(data), bytearray(), 0
    while True:
        while (eol := buffer.find(b"\r\n", pos)) < 0:
            buffer += await more(conn, "in a chunked body")
        size, pos = chunk_size(bytes(buffer[pos:eol])), eol + 2
        if size == 0:
            break
        while len(buffer) < pos + size + 2:
            buffer += await more(conn, "in a chunked body")
        if buffer[pos + size : pos + size + 2] != b"\r\n":  # a chunk longer than it said it was
            raise RemoteProtocolError("a chunk does not end where its size says")
        body += buffer[pos : pos + size]
        pos += size + 2
    return bytes(body), await read_trailers(conn, buffer, pos)


def chunk_size(size_line: bytes) -> int:
    if (sized := _CHUNK_SIZE.fullmatch(size_line)) is None:  # int(_, 16) alone would take "0x1f"
        raise RemoteProtocolError(f"bad chunk size {size_line[:20]!r}")
    return int(sized[1], 16)


async def read_trailers(conn: Connection, buffer: bytearray, pos: int) -> bytes:
    """Trailers, up to the empty line that ends the message: read past, unused. The bytes after it."""
    while True:
        while (eol := buffer.find(b"\r\n", pos)) < 0:
            buffer += await more(conn, "in a chunked body's trailers")
        if eol == pos:
            return bytes(buffer[pos + 2 :])
        name, colon, _ = bytes(buffer[pos:eol]).partition(b":")
        if not colon or not name or name.translate(None, _TOKEN_CHARS):
            raise RemoteProtocolError(f"not a trailer line: {bytes(buffer[pos:eol])[:60]!r}")
        pos = eol + 2


async def more(conn: Connection, where: str) -> bytes:
    """The next bytes; the server closing the connection here cuts the answer (an error)."""
    chunk = await conn.receive()
    if not chunk:
        raise RemoteProtocolError(f"the server closed the connection {where}")
    return chunk
