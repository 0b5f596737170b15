"""The streaming body reader (`body_stream`) against h11, on the responses `read_response` is held to:
the pieces it hands on, joined, are h11's body; what h11 refuses, it refuses; and a chunk's bytes are
handed on before the chunk is whole (what makes a streamed token visible when it lands)."""

from __future__ import annotations

import socket

import trio
import trio.testing
from hypothesis import given, settings

from engine.actors.targets.http.body_stream import BodyStream
from engine.actors.targets.http.response import read_head
from engine.actors.targets.http.wire import Connection, RemoteProtocolError
from tests.test_http_wire_h11 import Outcome, Written, h11_reads, responses


async def _stream(conn: Connection, seen: list[bytes]) -> Outcome:
    status, keep, headers, data = await read_head(conn)
    if status == 101:
        raise RemoteProtocolError("101")
    body = BodyStream(conn, status, headers, data, keep)
    async for piece in body.pieces():
        assert piece, "an empty piece would look like the end of the body"
        seen.append(piece)
    return status, headers, b"".join(seen), body.keep


def engine_streams(pieces: list[bytes]) -> tuple[Outcome, list[bytes]]:
    """The streaming reader on a real socket; each piece is sent once the reader waits for more."""
    result: list[Outcome] = []
    seen: list[bytes] = []

    async def main() -> None:
        ours, theirs = socket.socketpair()
        ours.setblocking(False)
        server = trio.socket.from_stdlib_socket(theirs)
        conn = Connection(ours, None)

        async def read() -> None:
            try:
                result.append(await _stream(conn, seen))
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
            server.close()
        conn.close()

    trio.run(main)
    return result[0], seen


@settings(max_examples=300, deadline=None)
@given(responses(broken=False))
def test_streamed_bodies_join_to_what_h11_reads(written: Written) -> None:
    pieces = written.pieces()
    assert engine_streams(pieces)[0] == h11_reads(pieces)


@settings(max_examples=200, deadline=None)
@given(responses(broken=True))
def test_broken_responses_are_errors_to_both(written: Written) -> None:
    pieces = written.pieces()
    assert engine_streams(pieces)[0] == h11_reads(pieces) == "error"


def test_a_chunk_is_handed_on_as_it_arrives() -> None:
    head = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
    sent = [head + b"9\r\ndata: ", b"a\n\n\r\n", b"0\r\n\r\n"]
    outcome, seen = engine_streams(sent)
    assert seen == [b"data: ", b"a\n\n"]  # the first half before the chunk's second read
    assert outcome == (200, {"transfer-encoding": "chunked"}, b"data: a\n\n", True)
