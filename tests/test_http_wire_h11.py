"""The engine's own HTTP/1.1 response reader agrees with h11's (httpx's parser) on generated responses.

Hypothesis writes a response (interim 1xx answers, then a final one framed by content-length, chunks
with extensions and trailers, or the connection's end; keep-alive or close; HTTP/1.0 or 1.1), maybe
breaks it in one of the ways servers do, and cuts its bytes at arbitrary points. The engine reads the
pieces off a real socket, one read per piece; h11 is fed the same pieces. Both must agree on the status,
the headers, the body, whether the connection may be used again, and on whether it is an error at all.

The generated responses stay inside the subset the engine speaks (actors/targets/http/README.md):
CRLF line ends, HTTP/1.x, no folded header lines.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass, field

import h11
import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.actors.targets.http.response import read_response
from engine.actors.targets.http.wire import Connection, RemoteProtocolError

Outcome = tuple[int, dict[str, str], bytes, bool] | str  # status, headers, body, keep; or "error"

_NAMES = st.sampled_from(["x-request-id", "Content-Type", "server", "X-Trace", "date", "openai-model"])
_VALUE_CHARS = st.characters(min_codepoint=0x21, max_codepoint=0x7E)
_VALUES = st.builds(
    lambda inner, spaces: spaces[0] + inner + spaces[1],
    st.text(_VALUE_CHARS, max_size=12).map(lambda t: t.replace("a", " a").replace("b", "\tb").strip(" \t")),
    st.tuples(st.sampled_from(["", " ", "  ", "\t"]), st.sampled_from(["", " ", "\t "])),
)  # surrounding spaces and tabs are the optional whitespace both strip; inner ones are kept
_HEADERS = st.lists(st.tuples(_NAMES, _VALUES), max_size=4)  # a repeated name is sent twice
_BREAKS = [
    "bad chunk size", "chunk longer than said", "space before colon", "two lengths", "gzip",
    "bad status", "101", "truncated", "stray CR", "name not a token",
]  # fmt: skip


@dataclass
class Written:
    """A generated response: its bytes and the ways they reach the reader."""

    data: bytes
    cuts: list[int] = field(default_factory=list)

    def pieces(self) -> list[bytes]:
        bounds = [0, *sorted({c for c in self.cuts if 0 < c < len(self.data)}), len(self.data)]
        return [self.data[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


def head(status_line: str, headers: list[tuple[str, str]]) -> bytes:
    return (status_line + "\r\n" + "".join(f"{n}:{v}\r\n" for n, v in headers) + "\r\n").encode()


@st.composite
def chunked_body(draw: st.DrawFn, body: bytes) -> bytes:
    cuts = sorted(set(draw(st.lists(st.integers(1, max(1, len(body) - 1)), max_size=4))))
    bounds = [0, *[c for c in cuts if c < len(body)], len(body)]
    out = b""
    for a, b in zip(bounds, bounds[1:], strict=False):
        if a == b:
            continue
        size = draw(st.sampled_from(["{:x}", "{:X}", "{:04x}"])).format(b - a)
        extension = draw(st.sampled_from(["", ";a=1", ';name="q x"', ";x", " "]))
        out += f"{size}{extension}\r\n".encode() + body[a:b] + b"\r\n"
    trailers = draw(st.lists(st.tuples(_NAMES, _VALUES), max_size=2))
    return out + b"0\r\n" + "".join(f"{n}: {v}\r\n" for n, v in trailers).encode() + b"\r\n"


@st.composite
def responses(draw: st.DrawFn, broken: bool) -> Written:
    interim = b"".join(
        head(f"HTTP/1.1 {code} Info", draw(_HEADERS))
        for code in draw(st.lists(st.sampled_from([100, 102, 103]), max_size=2))
    )
    version = draw(st.sampled_from(["1.1", "1.1", "1.0"]))
    no_body = [] if broken else [204, 304]  # a broken body must be read to be broken
    status = draw(st.sampled_from([200, 201, 404, 429, 500, *no_body]))
    reason = draw(st.sampled_from([" OK", "", " ", " Some Reason"]))
    headers = draw(_HEADERS)
    connection = draw(st.sampled_from([None, "close", "keep-alive", "Close", "upgrade, close", "closed"]))
    if connection is not None:
        headers.append(("Connection", connection))
    body = draw(st.binary(max_size=80)) if status not in (204, 304) else b""
    framing = draw(st.sampled_from(["length", "chunked", "to the end"]))
    if framing == "length":
        length = draw(st.sampled_from(["{}", "{}, {}", " {} "])).format(len(body), len(body))
        headers.append((draw(st.sampled_from(["content-length", "Content-Length"])), length))
        payload = body
    elif framing == "chunked":
        headers.append(("Transfer-Encoding", draw(st.sampled_from(["chunked", "Chunked"]))))
        payload = draw(chunked_body(body)) if status not in (204, 304) else b""
    else:
        payload = body
    headers = draw(st.permutations(headers))
    status_line = f"HTTP/{version} {status}{reason}"
    if broken:
        how = draw(st.sampled_from(_BREAKS))
        if how == "truncated":  # the server closes before the head is whole: an error either way
            full = interim + head(status_line, headers)
            return Written(full[: draw(st.integers(0, len(full) - 3))])
        status_line, headers, payload, interim = break_it(how, (status_line, headers, payload, interim), draw)
    data = interim + head(status_line, headers) + payload
    return Written(data, draw(st.lists(st.integers(0, len(data)), max_size=6)))


_BAD_STATUS = ["HTTP/1.1 2000 OK", "HTTP/1.1 20 OK", "HTTP/1.1 099 Low", "HTTP/1.1200 OK", "ICY 200 OK"]
_CHUNKED = ("transfer-encoding", "chunked")
Parts = tuple[str, list[tuple[str, str]], bytes, bytes]  # status line, headers, payload, interim answers


def break_it(how: str, parts: Parts, draw: st.DrawFn) -> Parts:
    """One of the ways a broken server breaks a response; each must be an error to both readers."""
    status_line, headers, payload, interim = parts
    if how == "bad chunk size":
        size = draw(st.sampled_from(["0x5", "+5", "5_0", "g", "", "5 ;x", "-1"]))
        return status_line, [*headers, _CHUNKED], f"{size}\r\nhello\r\n0\r\n\r\n".encode(), interim
    if how == "chunk longer than said":
        return status_line, [*headers, _CHUNKED], b"3\r\nhello\r\n0\r\n\r\n", interim
    if how == "space before colon":
        return status_line, [*headers, ("x-spaced ", "1"), ("content-length", "0")], b"", interim
    if how == "two lengths":
        return status_line, [*headers, ("content-length", "2"), ("content-length", "3")], b"abc", interim
    if how == "gzip":
        return status_line, [*headers, ("transfer-encoding", "gzip, chunked")], b"0\r\n\r\n", interim
    if how == "stray CR":  # a lone CR inside a value: some readers end the line there
        return status_line, [*headers, ("x-cr", "a\rb"), ("content-length", "0")], b"", interim
    if how == "name not a token":
        name = draw(st.sampled_from(["x(y", "x/y", "é", "x\ty"]))
        return status_line, [*headers, (name, "1"), ("content-length", "0")], b"", interim
    if how == "bad status":
        return draw(st.sampled_from(_BAD_STATUS)), headers, payload, interim
    assert how == "101"
    return status_line, headers, payload, b"HTTP/1.1 101 Switching Protocols\r\nupgrade: x\r\n\r\n" + interim


def engine_reads(pieces: list[bytes]) -> Outcome:
    """The engine's reader on a real socket; each piece is sent once the reader waits for more."""
    result: list[Outcome] = []

    async def main() -> None:
        ours, theirs = socket.socketpair()
        ours.setblocking(False)
        server = trio.socket.from_stdlib_socket(theirs)
        conn = Connection(ours, None)

        async def read() -> None:
            try:
                result.append(await read_response(conn))
            except RemoteProtocolError:
                result.append("error")

        async with trio.open_nursery() as nursery:
            nursery.start_soon(read)
            for piece in pieces:
                await trio.testing.wait_all_tasks_blocked()
                if result:
                    break
                await server.send(piece)
            await trio.testing.wait_all_tasks_blocked()
            server.close()  # the server's end: a close-delimited body ends here, a cut answer fails
        conn.close()

    trio.run(main)
    return result[0]


def h11_reads(pieces: list[bytes]) -> Outcome:
    client = h11.Connection(h11.CLIENT)
    client.send(h11.Request(method="POST", target="/v1", headers=[("host", "x"), ("content-length", "2")]))
    client.send(h11.Data(data=b"{}"))
    client.send(h11.EndOfMessage())
    final: h11.Response | None = None
    body = b""
    feed = [*pieces, b""]  # b"": the connection's end
    try:
        while True:
            event = client.next_event()
            if event is h11.NEED_DATA:
                client.receive_data(feed.pop(0))
            elif isinstance(event, h11.Response):
                final = event
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                break
            elif isinstance(event, h11.ConnectionClosed):
                return "error"
    except h11.RemoteProtocolError:
        return "error"
    assert final is not None
    headers: dict[str, str] = {}
    for name, value in final.headers:
        key, text = name.decode(), value.decode()
        headers[key] = f"{headers[key]}, {text}" if key in headers else text
    # kept: both sides done and the server's end not yet read (a close-delimited body read it)
    done = client.our_state is h11.DONE and client.their_state is h11.DONE
    keep = done and client.next_event() is h11.NEED_DATA
    return final.status_code, headers, body, keep


@settings(max_examples=300, deadline=None)
@given(responses(broken=False))
def test_well_formed_responses_read_as_h11_reads_them(written: Written) -> None:
    pieces = written.pieces()
    assert engine_reads(pieces) == h11_reads(pieces)


@settings(max_examples=200, deadline=None)
@given(responses(broken=True))
def test_broken_responses_are_errors_to_both(written: Written) -> None:
    pieces = written.pieces()
    assert engine_reads(pieces) == h11_reads(pieces) == "error"


def test_a_cut_body_is_an_error_and_a_close_delimited_one_is_not() -> None:
    cut = [b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nab"]
    to_the_end = [b"HTTP/1.1 200 OK\r\n\r\nab", b"cd"]
    assert engine_reads(cut) == h11_reads(cut) == "error"
    assert engine_reads(to_the_end) == h11_reads(to_the_end) == (200, {}, b"abcd", False)
