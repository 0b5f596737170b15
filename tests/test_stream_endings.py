"""How a streamed answer ends, over a real socket to a raw server writing the given bytes: without
`data: [DONE]` (llama.cpp variants, some proxies), with the usage in a last chunk whose choices are
empty, or cut mid-event; and a streamed answer, its events cut anywhere across HTTP chunks, read the
same as the whole answer to the same question."""

from __future__ import annotations

import functools
import json

import pytest
import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.actors.targets.anthropic import AnthropicTarget
from engine.actors.targets.openai import OpenAITarget
from engine.actors.targets.target_protocol import TargetError, TargetResponse
from tests.shims import target_spec
from tests.test_http_targets import request

WORDS = ["The ", "answer ", "is ", "42", " \u00e9t\u00e9."]
USAGE = {"prompt_tokens": 9, "completion_tokens": len(WORDS), "total_tokens": 9 + len(WORDS)}
WHOLE = {"choices": [{"message": {"role": "assistant", "content": "".join(WORDS)}}], "usage": USAGE}


def _event(value: object, end: bytes = b"\n") -> bytes:
    data = value if isinstance(value, str) else json.dumps(value)
    return f"data: {data}".encode() + end + end


def _sse(finish: bool = True, usage: bool = True, done: bool = True, end: bytes = b"\n") -> bytes:
    chunks: list[object] = [{"choices": [{"delta": {"content": word}}]} for word in WORDS]
    if finish:
        chunks.append({"choices": [{"delta": {}, "finish_reason": "stop"}]})
    if usage:  # stream_options.include_usage: a last chunk with empty choices
        chunks.append({"choices": [], "usage": USAGE})
    if done:
        chunks.append("[DONE]")
    return b"".join(_event(chunk, end) for chunk in chunks)


def _parts(body: bytes, cuts: tuple[int, ...]) -> list[bytes]:
    bounds = sorted({0, len(body), *(c % (len(body) + 1) for c in cuts)})
    return [body[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


def _answer(body: bytes, framing: str = "chunked", cuts: tuple[int, ...] = ()) -> list[bytes]:
    """A 200 head and `body` cut at `cuts`, each part its own write: chunked (a chunk per part), with
    a content-length, or to the connection's end."""
    head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
    parts = _parts(body, cuts)
    if framing == "chunked":
        chunks = [b"%x\r\n%s\r\n" % (len(part), part) for part in parts]
        return [f"{head}transfer-encoding: chunked\r\n\r\n".encode(), *chunks, b"0\r\n\r\n"]
    if framing == "length":
        return [f"{head}content-length: {len(body)}\r\n\r\n".encode(), *parts]
    return [f"{head}connection: close\r\n\r\n".encode(), *parts]


async def _call(answer: list[bytes], stream: bool = True, kind: str = "openai") -> TargetResponse:
    """One call of the openai kind to a server that reads the request, writes each part of `answer`
    once the client waits for more (so each is a read of its own), then closes."""

    async def serve(conn: trio.SocketStream) -> None:
        data = b""
        while b"\r\n\r\n" not in data:
            data += await conn.receive_some()
        head, _, body = data.partition(b"\r\n\r\n")
        length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
        while len(body) < length:
            body += await conn.receive_some()
        for part in answer:
            await trio.testing.wait_all_tasks_blocked()
            await conn.send_all(part)
        await conn.aclose()

    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(functools.partial(trio.serve_tcp, serve, 0, host="127.0.0.1"))
        port = listeners[0].socket.getsockname()[1]
        made = OpenAITarget if kind == "openai" else AnthropicTarget
        target = made(target_spec(kind=kind, base_url=f"http://127.0.0.1:{port}/v1", stream=stream))
        try:
            outcome: TargetResponse | TargetError = await target.call(request())
        except TargetError as exc:  # raised out of the nursery, not wrapped in an exception group
            outcome = exc
        await target.aclose()
        nursery.cancel_scope.cancel()
    if isinstance(outcome, TargetError):
        raise outcome
    return outcome


def _same(streamed: TargetResponse, whole: TargetResponse) -> None:
    assert (streamed.text, streamed.tokens_in, streamed.tokens_out) == (
        whole.text, whole.tokens_in, whole.tokens_out,
    )  # fmt: skip


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 5_000), max_size=12), st.sampled_from([b"\n", b"\r\n"]))
def test_a_streamed_answer_cut_anywhere_reads_as_the_whole_one(cuts: list[int], end: bytes) -> None:
    async def main() -> None:
        whole = await _call(_answer(json.dumps(WHOLE).encode(), "length"), stream=False)
        streamed = await _call(_answer(_sse(end=end), "chunked", tuple(cuts)))
        _same(streamed, whole)
        assert streamed.ttft_ms is not None

    trio.run(main)


@pytest.mark.parametrize("framing", ["chunked", "length", "close"])
async def test_without_done_an_answer_with_a_finish_reason_is_complete(framing: str) -> None:
    whole = await _call(_answer(json.dumps(WHOLE).encode(), "length"), stream=False)
    _same(await _call(_answer(_sse(done=False), framing)), whole)
    without_usage = await _call(_answer(_sse(usage=False, done=False), framing))
    assert without_usage.text == whole.text and without_usage.tokens_out == 0  # counted as events instead


@pytest.mark.parametrize("framing", ["chunked", "length", "close"])
async def test_a_body_ended_before_any_end_is_a_network_error(framing: str) -> None:
    with pytest.raises(TargetError) as cut:
        await _call(_answer(_sse(finish=False, usage=False, done=False), framing))
    assert cut.value.error_class == "network" and cut.value.retryable
    assert "before data: [DONE] or a finish reason" in cut.value.message


@pytest.mark.parametrize("framing", ["chunked", "length", "close"])
async def test_a_body_ended_mid_event_is_a_network_error(framing: str) -> None:
    body = _sse(finish=False, usage=False, done=False)
    with pytest.raises(TargetError) as cut:
        await _call(_answer(body + b'data: {"choices": [{"delta": {"cont', framing))
    assert cut.value.error_class == "network" and "mid-event" in cut.value.message


async def test_a_connection_closed_mid_chunk_is_a_network_error() -> None:
    answer = b"".join(_answer(_sse(), "chunked"))
    with pytest.raises(TargetError) as cut:
        await _call([answer[: len(answer) // 2]])
    assert cut.value.error_class == "network" and cut.value.retryable


def _messages_sse(stop_reason: bool = True, stop: bool = True) -> bytes:
    """The Messages API's events for WORDS: message_start, a ping, a text delta per word, message_delta
    (with its stop_reason unless told otherwise), message_stop."""
    start = {"type": "message_start", "message": {"content": [], "usage": {"input_tokens": 9}}}
    events = [("message_start", start), ("ping", {"type": "ping"})]
    events += [("content_block_delta", {"delta": {"type": "text_delta", "text": w}}) for w in WORDS]
    delta = {"stop_reason": "end_turn"} if stop_reason else {}
    events.append(("message_delta", {"delta": delta, "usage": {"output_tokens": len(WORDS)}}))
    if stop:
        events.append(("message_stop", {"type": "message_stop"}))
    return b"".join(f"event: {name}\n".encode() + _event(data) for name, data in events)


@pytest.mark.parametrize("framing", ["chunked", "length", "close"])
async def test_a_messages_stream_ends_at_message_stop_or_a_stop_reason(framing: str) -> None:
    whole = {"content": [{"type": "text", "text": "".join(WORDS)}],
             "usage": {"input_tokens": 9, "output_tokens": len(WORDS)}}  # fmt: skip
    expected = await _call(_answer(json.dumps(whole).encode(), "length"), stream=False, kind="anthropic")
    assert expected.text == "".join(WORDS)
    for body in (_messages_sse(), _messages_sse(stop=False)):  # message_stop, or only a stop_reason
        streamed = await _call(_answer(body, framing), kind="anthropic")
        _same(streamed, expected)
        assert streamed.ttft_ms is not None


@pytest.mark.parametrize("framing", ["chunked", "length", "close"])
async def test_a_messages_stream_cut_before_its_end_is_a_network_error(framing: str) -> None:
    with pytest.raises(TargetError) as cut:
        await _call(_answer(_messages_sse(stop_reason=False, stop=False), framing), kind="anthropic")
    assert cut.value.error_class == "network" and cut.value.retryable
    assert "before event: message_stop or a finish reason" in cut.value.message
    body = _messages_sse(stop_reason=False, stop=False) + b'event: content_block_delta\ndata: {"del'
    with pytest.raises(TargetError) as mid:
        await _call(_answer(body, framing), kind="anthropic")
    assert mid.value.error_class == "network" and "mid-event" in mid.value.message
