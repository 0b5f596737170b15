"""The targets' HTTP/1.1 client against a scripted server on a real socket: every answer's framing
(length, chunks, to the end of the connection, interim 100), keep-alive reuse, and the pool's limit.

The server answers each request with the next script entry, a list of byte pieces; between pieces it
waits until every task is blocked, so the client has read the first piece before the next is sent
(a split answer really arrives in parts, with no clock involved).
"""

from __future__ import annotations

import shutil
import ssl
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path

import pytest
import trio
import trio.testing

from engine.actors.targets.http.client import ConnectError, HttpPool, RemoteProtocolError
from engine.actors.targets.http.common import JsonClient, shared_ssl_context
from engine.actors.targets.target_protocol import TargetError
from tests.shims import target_spec

OK = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 11\r\n\r\n"


class Scripted:
    def __init__(self, script: list[list[bytes]], close_after: bool = False) -> None:
        self.script = script
        self.close_after = close_after  # drop each connection once it has answered one request
        self.connections = 0
        self.requests: list[bytes] = []
        self.hold = trio.Event()
        self.hold.set()

    async def handle(self, stream: trio.abc.Stream) -> None:
        self.connections += 1
        try:
            await self.answer(stream)
        except trio.BrokenResourceError:  # a client that refused the TLS handshake
            pass

    async def answer(self, stream: trio.abc.Stream) -> None:
        buffer = b""
        async with stream:
            while self.script:
                while b"\r\n\r\n" not in buffer:
                    chunk = await stream.receive_some(65536)
                    if not chunk:
                        return
                    buffer += chunk
                head, _, rest = buffer.partition(b"\r\n\r\n")
                length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
                while len(rest) < length:
                    rest += await stream.receive_some(65536)
                self.requests.append(head + b"\r\n\r\n" + rest[:length])
                buffer = rest[length:]
                await self.hold.wait()
                for i, piece in enumerate(self.script.pop(0)):
                    if i:
                        await trio.testing.wait_all_tasks_blocked()
                    await stream.send_all(piece)
                if self.close_after:
                    return


@asynccontextmanager
async def serving(server: Scripted) -> AsyncIterator[str]:
    async with trio.open_nursery() as nursery:
        (listener,) = await nursery.start(partial(trio.serve_tcp, server.handle, 0, host="127.0.0.1"))
        port = listener.socket.getsockname()[1]
        yield f"http://127.0.0.1:{port}/v1/chat"
        nursery.cancel_scope.cancel()


def pool(url: str, max_connections: int = 4) -> HttpPool:
    return HttpPool(url, {"content-type": "application/json"}, shared_ssl_context, max_connections)


async def test_keep_alive_reuses_one_connection_and_sends_one_head() -> None:
    server = Scripted([[OK + b'{"a": "ok"}'] for _ in range(3)])
    async with serving(server) as url:
        client = pool(url)
        answers = [await client.post(b'{"q": 1}', 5.0) for _ in range(3)]
        await client.aclose()
    headers = {"content-type": "application/json", "content-length": "11"}
    assert answers == [(200, headers, b'{"a": "ok"}')] * 3
    assert server.connections == 1
    head = server.requests[0].split(b"\r\n")
    assert head[0] == b"POST /v1/chat HTTP/1.1" and head[1].startswith(b"host: 127.0.0.1:")
    assert b"content-length: 8" in head and server.requests[0].endswith(b'\r\n\r\n{"q": 1}')


async def test_answers_split_across_reads() -> None:
    chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    script = [
        [OK[:20], OK[20:] + b'{"a"', b': "ok"}'],  # head and body each cut in two
        [chunked + b"4\r\n{\"a\"\r\n", b"7;ext=1\r\n: \"ok\"}\r\n0\r\n", b"trailer: x\r\n\r\n"],
        [b"HTTP/1.1 100 Continue\r\n\r\n", OK + b'{"a": "ok"}'],  # an interim answer first
    ]
    server = Scripted(script)
    async with serving(server) as url:
        client = pool(url)
        bodies = [(await client.post(b"{}", 5.0))[2] for _ in range(3)]
        await client.aclose()
    assert bodies == [b'{"a": "ok"}'] * 3 and server.connections == 1


async def test_a_connection_the_server_ends_is_not_used_again() -> None:
    to_the_end = [b"HTTP/1.1 200 OK\r\n\r\n", b"all of it"]  # no length: the body ends with the connection
    closing = [b"HTTP/1.1 200 OK\r\nConnection: close\r\ncontent-length: 2\r\n\r\nok"]
    kept = [OK + b'{"a": "ok"}']  # kept alive by the client, then closed by the server while idle
    server = Scripted([to_the_end, closing, kept, kept], close_after=True)
    async with serving(server) as url:
        client = pool(url)
        bodies = [(await client.post(b"{}", 5.0))[2] for _ in range(3)]
        await trio.testing.wait_all_tasks_blocked()  # the server has closed the idle connection
        bodies.append((await client.post(b"{}", 5.0))[2])
        await client.aclose()
    assert bodies == [b"all of it", b"ok", b'{"a": "ok"}', b'{"a": "ok"}']
    assert server.connections == 4


async def test_a_body_cut_short_is_a_protocol_error() -> None:
    server = Scripted([[OK + b'{"a"'], []], close_after=True)
    async with serving(server) as url:
        client = pool(url)
        with pytest.raises(RemoteProtocolError, match="closed the connection in the middle"):
            await client.post(b"{}", 5.0)
        await client.aclose()


async def test_the_pool_opens_at_most_its_limit() -> None:
    server = Scripted([[OK + b'{"a": "ok"}'] for _ in range(6)])
    server.hold = trio.Event()  # no answer until every request that can be sent has been
    results: list[int] = []
    async with serving(server) as url:
        client = pool(url, max_connections=2)

        async def one() -> None:
            results.append((await client.post(b"{}", 5.0))[0])

        async with trio.open_nursery() as nursery:
            for _ in range(6):
                nursery.start_soon(one)
            await trio.testing.wait_all_tasks_blocked()
            assert server.connections == 2 and len(server.requests) == 2
            server.hold.set()
        await client.aclose()
    assert results == [200] * 6 and server.connections == 2


async def test_a_silent_server_times_out_reading(autojump_clock: trio.abc.Clock) -> None:
    server = Scripted([[OK + b'{"a": "ok"}']])
    server.hold = trio.Event()  # never set: the answer never comes
    async with serving(server) as url:
        client = pool(url)
        with pytest.raises(Exception, match="no read within 30 s") as caught:
            await client.post(b"{}", 30.0)
        await client.aclose()
    assert type(caught.value).__name__ == "ReadTimeout"


def test_a_header_with_a_line_break_is_a_config_error() -> None:
    spec = target_spec(kind="openai", base_url="http://127.0.0.1:9/v1", headers={"x-team": "a\r\nx-evil: 1"})
    with pytest.raises(TargetError) as caught:
        JsonClient(spec, "http://127.0.0.1:9/v1/chat/completions", {})
    assert caught.value.kind == "config" and "'x-team' holds a line break" in caught.value.message


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 made by the openssl command (what a TLS server of one's own needs)."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
async def test_https_keeps_one_verified_connection(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    server_side = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_side.load_cert_chain(cert, key)
    trusted = ssl.create_default_context(cafile=str(cert))
    server = Scripted([[OK[:30], OK[30:] + b'{"a": "ok"}'] for _ in range(2)])
    async with trio.open_nursery() as nursery:
        serve = partial(trio.serve_ssl_over_tcp, server.handle, 0, server_side, host="127.0.0.1")
        (listener,) = await nursery.start(serve)
        port = listener.transport_listener.socket.getsockname()[1]
        client = HttpPool(f"https://127.0.0.1:{port}/v1/chat", {}, lambda: trusted)
        bodies = [(await client.post(b"{}", 5.0))[2] for _ in range(2)]
        await client.aclose()
        strict = HttpPool(f"https://127.0.0.1:{port}/v1/chat", {}, ssl.create_default_context)
        with pytest.raises(ConnectError, match="TLS handshake"):  # an unknown certificate is refused
            await strict.post(b"{}", 5.0)
        nursery.cancel_scope.cancel()
    assert bodies == [b'{"a": "ok"}'] * 2 and server.connections == 2  # the refused one counts too


async def test_a_connection_that_never_completes_is_one_timeout_not_retried(
    autojump_clock: trio.abc.Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The attempt's one deadline runs out in the TLS handshake (the server accepts, then says
    nothing): a timeout, as a silent answer is, not a connect failure retried max_retries times."""
    from engine.actors.targets.openai import OpenAITarget
    from engine.actors.targets.retry import call_with_retries
    from engine.actors.targets.target_protocol import TargetRequest
    from engine.events.spec import CaseSpec, VariantSpec

    for name in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    accepted: list[trio.SocketStream] = []

    async def silent(stream: trio.SocketStream) -> None:
        accepted.append(stream)
        await trio.sleep_forever()

    async with trio.open_nursery() as nursery:
        (listener,) = await nursery.start(partial(trio.serve_tcp, silent, 0, host="127.0.0.1"))
        port = listener.socket.getsockname()[1]
        target = OpenAITarget(target_spec(kind="openai", base_url=f"https://127.0.0.1:{port}/v1", model="m"))
        request = TargetRequest(
            run_id="r", variant=VariantSpec(name="v"), case=CaseSpec(id="c", prompt="q"), repeat=0,
            prompt="q", timeout_s=30.0,
        )  # fmt: skip
        with pytest.raises(TargetError) as caught:
            await call_with_retries(target, request, max_retries=3, rng=1)
        await target.aclose()
        nursery.cancel_scope.cancel()
    assert caught.value.kind == "timeout" and "no answer within 30 s" in caught.value.message
    assert len(accepted) == 1  # one attempt: a timeout is not retried
