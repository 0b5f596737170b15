"""A real-socket fake OpenAI-compatible (and Anthropic Messages, and Gemini generateContent) server,
for tests and benchmarks. A request with "stream": true is answered with server-sent events, one token
at a time at the pace `first_token_ms` / `token_gap_ms` (or `pace_by_model`) set; fault "cut" closes
it after the first token. `shape` holds requests to a provider's (tests/fakes/provider_shapes.py).

trio + h11, HTTP/1.1 keep-alive; ~3k req/s per core. Behaviour per POST: normal
(the answer is `answer(body)`, a function of model, messages, temperature, seed...),
or a fault: any status code as digits ("429" carries Retry-After: `retry_after`,
"500", "404"...), "hang" (never answer), "close" (drop the connection mid-body),
"malformed" (invalid JSON), "echo" (a 401 quoting the request headers), "empty"
(valid JSON without choices/content). Faults
come from a script (a list consumed in order) or a function of (request number,
JSON body); `latency_ms`, `faults`, `answer` and `retry_after` may be changed while
the server runs. Every request is recorded for assertions.

A gate lets a test control progress without the clock: `server.gate.hold()` makes every answer
wait, `server.gate.release(n)` lets the next n waiting (or arriving) answers go in arrival order,
`server.gate.open()` lets everything through again, and `await server.wait_received(n)` returns
once n requests have arrived.

    async with open_fake_openai(latency_ms=50) as server:   # in-process
        server.base_url  # http://127.0.0.1:PORT/v1

    python -m tests.fakes.openai_server --port 0 --latency-ms 50   # prints LISTENING <base_url>
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import h11
import msgspec
import trio

from tests.fakes.provider_shapes import ProviderShape, mismatch

Fault = str | None
FaultPlan = list[Fault] | Callable[[int, dict[str, Any]], Fault] | None


class Gate:
    """Answers wait here while the gate is held; release(n) lets n go, first come first served."""

    def __init__(self) -> None:
        self.held = False
        self._permits = 0
        self._lot = trio.lowlevel.ParkingLot()

    def hold(self) -> None:
        self.held = True

    def release(self, count: int) -> None:
        woken = len(self._lot.unpark(count=count))
        self._permits += count - woken  # for answers that have not arrived yet

    def open(self) -> None:
        self.held = False
        self._lot.unpark_all()

    async def wait_turn(self) -> None:
        if not self.held:
            return
        if self._permits:
            self._permits -= 1
            return
        await self._lot.park()


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


def default_answer(body: dict[str, Any]) -> str:
    return "The answer is 42."


@dataclass
class FakeOpenAI:
    latency_ms: float = 0.0
    faults: FaultPlan = None
    answer: Callable[[dict[str, Any]], str] = default_answer
    requests: list[Recorded] = field(default_factory=list)
    keep_requests: bool = True  # False: count them only (a benchmark's million requests, its memory flat)
    received: int = 0
    # faults the server did not know: also raised, but the raise can lose a race with the
    # client's own error when both end the same nursery, so tests read them here
    errors: list[str] = field(default_factory=list)
    port: int = 0
    # seconds ("1") or an HTTP date; None sends a 429 without the header
    retry_after: str | None = "1"
    gate: Gate = field(default_factory=Gate)
    # a streamed answer ("stream": true): its first token this long after the head, then one token
    # per token_gap_ms; fault "cut" closes the connection after the first token
    first_token_ms: float = 0.0
    token_gap_ms: float = 0.0
    pace_by_model: dict[str, tuple[float, float]] = field(default_factory=dict)  # model: (first, gap)
    # the whole streamed answer in one write, as a buffering proxy sends it: what reading the events
    # costs without a wake-up per token (benchmarks/bench_s1_stream.py)
    joined_stream: bool = False
    # a provider's request shape (tests/fakes/provider_shapes.py): a request off it gets its error
    shape: ProviderShape | None = None
    _arrivals: list[tuple[int, trio.Event]] = field(default_factory=list)

    def record(self, request: Recorded) -> None:
        self.received += 1
        if self.keep_requests:
            self.requests.append(request)
        for n, arrived in list(self._arrivals):
            if self.received >= n:
                arrived.set()
                self._arrivals.remove((n, arrived))

    async def wait_received(self, count: int) -> None:
        """Return once `count` requests have arrived in all (an event, not a poll)."""
        if self.received >= count:
            return
        arrived = trio.Event()
        self._arrivals.append((count, arrived))
        await arrived.wait()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def next_fault(self, body: dict[str, Any]) -> Fault:
        index = self.received - 1
        if callable(self.faults):
            return self.faults(index, body)
        if isinstance(self.faults, list) and self.faults:
            return self.faults.pop(0)
        return None


# msgspec, not json: the server's JSON work is a tenth of its per-request CPU with it
_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode


def _words(text: str) -> int:
    return len(text.split())


def chat_completion(server: FakeOpenAI, body: dict[str, Any]) -> dict[str, Any]:
    content = server.answer(body)
    prompt = " ".join(str(m.get("content", "")) for m in body.get("messages", []))
    usage = {"prompt_tokens": _words(prompt), "completion_tokens": _words(content)}
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    choice = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
    return {
        "id": "chatcmpl-fake", "object": "chat.completion", "model": body.get("model", "fake"),
        "choices": [choice], "usage": usage,
    }  # fmt: skip


def anthropic_message(server: FakeOpenAI, body: dict[str, Any]) -> dict[str, Any]:
    content = server.answer(body)
    prompt = " ".join(str(m.get("content", "")) for m in body.get("messages", []))
    return {
        "id": "msg-fake", "type": "message", "role": "assistant", "model": body.get("model", "fake"),
        "content": [{"type": "text", "text": content}], "stop_reason": "end_turn",
        "usage": {"input_tokens": _words(prompt), "output_tokens": _words(content)},
    }  # fmt: skip


def gemini_content(server: FakeOpenAI, body: dict[str, Any]) -> dict[str, Any]:
    content = server.answer(body)
    prompt = " ".join(str(p.get("text", "")) for c in body.get("contents", []) for p in c.get("parts", []))
    return {
        "candidates": [{"content": {"role": "model", "parts": [{"text": content}]}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": _words(prompt), "candidatesTokenCount": _words(content)},
    }


async def _read_request(conn: h11.Connection, stream: trio.SocketStream) -> tuple[h11.Request, bytes] | None:
    request: h11.Request | None = None
    body = bytearray()
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            data = await stream.receive_some(65536)
            conn.receive_data(data)
            if not data and conn.their_state is not h11.DONE:
                return None
            continue
        if isinstance(event, h11.Request):
            request = event
        elif isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, h11.EndOfMessage):
            assert request is not None
            return request, bytes(body)
        elif isinstance(event, h11.ConnectionClosed):
            return None


async def _respond(
    conn: h11.Connection, stream: trio.SocketStream, status: int, payload: bytes, extra: list[tuple[str, str]]
) -> None:
    headers = [("content-type", "application/json"), ("content-length", str(len(payload))), *extra]
    # one send per response: a syscall and a checkpoint each cost more than all of h11's framing
    head = conn.send(h11.Response(status_code=status, headers=headers)) or b""
    data = conn.send(h11.Data(data=payload)) or b""
    await stream.send_all(head + data + (conn.send(h11.EndOfMessage()) or b""))


async def _serve_one(server: FakeOpenAI, conn: h11.Connection, stream: trio.SocketStream) -> bool:
    """Answer one request; False when the connection must end."""
    got = await _read_request(conn, stream)
    if got is None:
        return False
    request, raw = got
    path = request.target.decode()
    route = path.partition("?")[0]  # what a server routes on (Azure's api-version is in the query)
    try:
        body = _decode(raw) if raw else {}
    except msgspec.DecodeError:
        body = {"_raw": raw.decode(errors="replace")}
    headers = {k.decode().lower(): v.decode() for k, v in request.headers}
    if request.method == b"GET" and path == "/stats":  # how many requests came (for other processes)
        await _respond(conn, stream, 200, _encode({"received": server.received}), [])
        return _next_cycle(conn)
    server.record(Recorded(request.method.decode(), path, headers, body))
    fault = server.next_fault(body) if request.method == b"POST" else None
    shape = server.shape
    if shape is not None and (why := mismatch(shape, path, headers, body)):
        status = shape.refused if "header" in why else 400 if "query" in why else 404
        await _respond(conn, stream, status, shape.error(why), [])
        conn.start_next_cycle()
        return True
    if shape is not None and fault == "429":
        await _respond(
            conn, stream, 429, shape.error("rate limit exceeded"), list(shape.rate_limited.items())
        )
        conn.start_next_cycle()
        return True
    await server.gate.wait_turn()
    if server.latency_ms:
        await trio.sleep(server.latency_ms / 1000)
    if fault == "hang":
        await trio.sleep_forever()
    if fault == "close":
        head = h11.Response(status_code=200, headers=[("content-length", "1000")])
        await stream.send_all(conn.send(head) + b'{"choices": [')
        return False
    if fault is not None and fault.isdigit():
        status = int(fault)
        extra = [("retry-after", server.retry_after)] if status == 429 and server.retry_after else []
        payload = b'{"error": {"message": "fake %d", "type": "fake"}}' % status
        await _respond(conn, stream, status, payload, extra)
    elif fault == "echo":  # a careless server that quotes the request's headers in its error body
        await _respond(conn, stream, 401, _encode({"error": {"message": f"bad credentials: {headers}"}}), [])
    elif fault == "malformed":
        await _respond(conn, stream, 200, b'{"choices": [ not json', [])
    elif fault == "empty":
        await _respond(conn, stream, 200, b'{"id": "fake", "object": "error"}', [])
    elif fault is not None and fault != "cut":
        # a typo in a test's fault plan must fail loudly, not serve a normal answer
        server.errors.append(f"unknown fault {fault!r}")
        raise ValueError(server.errors[-1])
    elif route.endswith("/models"):
        await _respond(conn, stream, 200, b'{"object": "list", "data": [{"id": "fake"}]}', [])
    elif body.get("stream") is True and route.endswith(("/chat/completions", "/messages")):
        if not await _stream_answer(server, conn, stream, path, body, cut=fault == "cut"):
            return False
    elif route.endswith("/chat/completions"):
        await _respond(conn, stream, 200, _encode(chat_completion(server, body)), [])
    elif route.endswith("/messages"):
        await _respond(conn, stream, 200, _encode(anthropic_message(server, body)), [])
    elif route.endswith(":generateContent"):  # Gemini's native API (the provider plugin example)
        await _respond(conn, stream, 200, _encode(gemini_content(server, body)), [])
    else:
        await _respond(conn, stream, 404, b'{"error": "not found"}', [])
    return _next_cycle(conn)


def _next_cycle(conn: h11.Connection) -> bool:
    """Ready for the connection's next request; False when it must close."""
    if conn.our_state is h11.MUST_CLOSE or conn.their_state is h11.MUST_CLOSE:
        return False
    conn.start_next_cycle()
    return True


def _sse(name: str | None, data: Any) -> bytes:
    text = data if isinstance(data, str) else _encode(data).decode()
    return (f"event: {name}\n" if name else "").encode() + f"data: {text}\n\n".encode()


def _stream_events(server: FakeOpenAI, path: str, body: dict[str, Any]) -> tuple[list[bytes], list[bytes]]:
    """The events of a streamed answer: one per token, and the closing ones (usage, end marker)."""
    if path.endswith("/messages"):
        whole = anthropic_message(server, body)
        words = whole["content"][0]["text"].split(" ")
        tokens = [w if i == 0 else " " + w for i, w in enumerate(words)]
        start = {
            "message": {**whole, "content": [], "usage": {"input_tokens": whole["usage"]["input_tokens"]}}
        }
        deltas = [_sse("content_block_delta", {"delta": {"type": "text_delta", "text": t}}) for t in tokens]
        closing = [_sse("message_delta", {"usage": {"output_tokens": whole["usage"]["output_tokens"]}}),
                   _sse("message_stop", {"type": "message_stop"})]  # fmt: skip
        return [_sse("message_start", start) + _sse("ping", {}) + deltas[0], *deltas[1:]], closing
    whole = chat_completion(server, body)
    words = whole["choices"][0]["message"]["content"].split(" ")
    chunk = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": whole["model"]}
    deltas = [
        _sse(None, {**chunk, "choices": [{"index": 0, "delta": {"content": w if i == 0 else " " + w}}]})
        for i, w in enumerate(words)
    ]
    wants_usage = (body.get("stream_options") or {}).get("include_usage")
    usage = [_sse(None, {**chunk, "choices": [], "usage": whole["usage"]})] if wants_usage else []
    return deltas, [*usage, _sse(None, "[DONE]")]


async def _stream_answer(
    server: FakeOpenAI,
    conn: h11.Connection,
    stream: trio.SocketStream,
    path: str,
    body: dict[str, Any],
    cut: bool,
) -> bool:
    """Send a streamed answer, token by token at the server's pace; False when it was cut."""
    tokens, closing = _stream_events(server, path, body)
    head = h11.Response(status_code=200, headers=[("content-type", "text/event-stream")])
    if server.joined_stream and not cut:
        writes = [head, *(h11.Data(data=event) for event in [*tokens, *closing]), h11.EndOfMessage()]
        await stream.send_all(b"".join(conn.send(part) or b"" for part in writes))
        return True
    await stream.send_all(conn.send(head) or b"")
    first_ms, gap_ms = server.pace_by_model.get(
        body.get("model"), (server.first_token_ms, server.token_gap_ms)
    )
    await trio.sleep(first_ms / 1000)
    for index, token in enumerate(tokens):
        if index:
            await trio.sleep(gap_ms / 1000)
        await stream.send_all(conn.send(h11.Data(data=token)) or b"")
        if cut:
            return False
    await stream.send_all(b"".join(conn.send(h11.Data(data=e)) or b"" for e in closing))
    await stream.send_all(conn.send(h11.EndOfMessage()) or b"")
    return True


async def _connection(server: FakeOpenAI, stream: trio.SocketStream) -> None:
    conn = h11.Connection(h11.SERVER)
    try:
        while await _serve_one(server, conn, stream):
            pass
    except (trio.BrokenResourceError, trio.ClosedResourceError, h11.RemoteProtocolError):
        pass
    finally:
        # shielded: the client reacts to the close at once, and a cancellation arriving in an
        # unshielded aclose would replace the error (an unknown fault) this task is raising
        with trio.CancelScope(shield=True):
            await stream.aclose()


@asynccontextmanager
async def open_fake_openai(
    latency_ms: float = 0.0,
    faults: FaultPlan = None,
    answer: Callable[[dict[str, Any]], str] = default_answer,
) -> AsyncIterator[FakeOpenAI]:
    server = FakeOpenAI(latency_ms=latency_ms, faults=faults, answer=answer)
    async with trio.open_nursery() as nursery:
        serve = functools.partial(trio.serve_tcp, functools.partial(_connection, server), 0, host="127.0.0.1")
        listeners = await nursery.start(serve)
        server.port = listeners[0].socket.getsockname()[1]
        yield server
        nursery.cancel_scope.cancel()


async def _main(port: int, latency_ms: float, joined_stream: bool) -> None:
    server = FakeOpenAI(latency_ms=latency_ms, keep_requests=False, joined_stream=joined_stream)
    async with trio.open_nursery() as nursery:
        serve = functools.partial(
            trio.serve_tcp, functools.partial(_connection, server), port, host="127.0.0.1"
        )
        listeners = await nursery.start(serve)
        server.port = listeners[0].socket.getsockname()[1]
        print(f"LISTENING {server.base_url}", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--joined-stream", action="store_true", help="a streamed answer in one write")
    args = parser.parse_args()
    try:
        trio.run(_main, args.port, args.latency_ms, args.joined_stream)
    except KeyboardInterrupt:
        pass
