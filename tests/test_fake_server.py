"""The fake OpenAI-compatible server itself, observed with plain httpx over a real socket."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from tests.conftest import SAFETY_S
from tests.fakes.openai_server import open_fake_openai

ROOT = Path(__file__).resolve().parent.parent
CHAT = {"model": "m1", "messages": [{"role": "user", "content": "two words"}], "temperature": 0.5, "seed": 3}


async def test_chat_completion_shape_and_recording() -> None:
    def answer(body: dict[str, Any]) -> str:
        return f"{body['model']} t={body['temperature']} s={body['seed']} {body['messages'][-1]['content']}"

    async with open_fake_openai(answer=answer) as server, httpx.AsyncClient() as client:
        assert server.base_url.startswith("http://127.0.0.1:") and server.base_url.endswith("/v1")
        response = await client.post(
            f"{server.base_url}/chat/completions", json=CHAT, headers={"Authorization": "Bearer k"}
        )
    data = response.json()
    assert response.status_code == 200 and data["object"] == "chat.completion"
    assert data["choices"][0]["message"] == {"role": "assistant", "content": "m1 t=0.5 s=3 two words"}
    usage = data["usage"]
    assert usage == {"prompt_tokens": 2, "completion_tokens": 5, "total_tokens": 7}
    (seen,) = server.requests
    assert (seen.method, seen.path, seen.body) == ("POST", "/v1/chat/completions", CHAT)
    assert seen.headers["authorization"] == "Bearer k"


async def test_models_and_anthropic_messages() -> None:
    async with open_fake_openai() as server, httpx.AsyncClient() as client:
        models = await client.get(f"{server.base_url}/models")
        message = await client.post(
            f"{server.base_url}/messages",
            json={"model": "claude", "max_tokens": 10, "messages": [{"role": "user", "content": "hi there"}]},
        )
        missing = await client.post(f"{server.base_url}/nowhere", json={})
    assert models.status_code == 200 and models.json()["data"][0]["id"] == "fake"
    data = message.json()
    assert data["type"] == "message" and data["content"][0] == {"type": "text", "text": "The answer is 42."}
    assert data["usage"] == {"input_tokens": 2, "output_tokens": 4}
    assert missing.status_code == 404
    assert [r.method for r in server.requests] == ["GET", "POST", "POST"]


async def test_scripted_status_faults_then_normal() -> None:
    async with open_fake_openai(faults=["429", "500", "400", "malformed", "empty"]) as server:
        async with httpx.AsyncClient() as client:
            url = f"{server.base_url}/chat/completions"
            responses = [await client.post(url, json=CHAT) for _ in range(6)]
    limited, boom, bad, malformed, empty, normal = responses
    assert limited.status_code == 429 and limited.headers["retry-after"] == "1"
    assert boom.status_code == 500 and bad.status_code == 400
    assert malformed.status_code == 200
    with pytest.raises(ValueError):
        malformed.json()
    assert empty.status_code == 200 and "choices" not in empty.json()
    assert normal.json()["choices"][0]["message"]["content"] == "The answer is 42."


async def test_behaviour_is_settable_while_running() -> None:
    async with open_fake_openai() as server, httpx.AsyncClient() as client:
        url = f"{server.base_url}/chat/completions"
        assert (await client.post(url, json=CHAT)).status_code == 200
        server.retry_after = "Wed, 21 Oct 2099 07:28:00 GMT"
        server.faults = lambda index, body: "429" if body.get("seed") == 9 else None
        throttled = await client.post(url, json={**CHAT, "seed": 9})
        fine = await client.post(url, json=CHAT)
    assert throttled.status_code == 429 and throttled.headers["retry-after"].endswith("GMT")
    assert fine.status_code == 200


async def test_close_mid_body_is_a_protocol_error() -> None:
    async with open_fake_openai(faults=["close"]) as server, httpx.AsyncClient() as client:
        with pytest.raises(httpx.RemoteProtocolError):
            await client.post(f"{server.base_url}/chat/completions", json=CHAT)
        # the server keeps serving on a new connection
        assert (await client.post(f"{server.base_url}/chat/completions", json=CHAT)).status_code == 200


async def test_hang_never_answers() -> None:
    async with open_fake_openai(faults=["hang"]) as server, httpx.AsyncClient() as client:
        started = time.perf_counter()
        with pytest.raises(httpx.ReadTimeout):
            await client.post(f"{server.base_url}/chat/completions", json=CHAT, timeout=0.2)
    assert time.perf_counter() - started >= 0.2  # it waited for the client's timeout: no answer came


async def test_unknown_fault_fails_loudly() -> None:
    with pytest.raises(BaseException):  # noqa: B017 - trio wraps it in an ExceptionGroup
        async with open_fake_openai(faults=["teapot"]) as server, httpx.AsyncClient() as client:
            await client.post(f"{server.base_url}/chat/completions", json=CHAT, timeout=SAFETY_S)
    # the server's ValueError or the client's disconnect error ends the block, whichever comes first
    assert server.errors == ["unknown fault 'teapot'"]


async def test_fixed_latency() -> None:
    async with open_fake_openai(latency_ms=50) as server, httpx.AsyncClient() as client:
        started = time.perf_counter()
        await client.post(f"{server.base_url}/chat/completions", json=CHAT)
    assert time.perf_counter() - started >= 0.05


async def test_keep_alive_serves_many_requests_on_one_connection() -> None:
    body = b'{"model": "m", "messages": [{"role": "user", "content": "hi"}]}'
    request = (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    async with open_fake_openai() as server:
        stream = await trio.open_tcp_stream("127.0.0.1", server.port)
        async with stream:
            await stream.send_all(request * 3)  # pipelined, all on one socket
            received = b""
            with trio.fail_after(5):
                while received.count(b"HTTP/1.1 200") < 3 or not received.endswith(b"}"):
                    received += await stream.receive_some(65536)
    assert received.count(b'"chat.completion"') == 3 and len(server.requests) == 3


async def test_concurrent_clients() -> None:
    async with open_fake_openai(latency_ms=5) as server, httpx.AsyncClient() as client:
        statuses: list[int] = []

        async def one() -> None:
            response = await client.post(f"{server.base_url}/chat/completions", json=CHAT)
            statuses.append(response.status_code)

        async with trio.open_nursery() as nursery:
            for _ in range(100):
                nursery.start_soon(one)
    assert statuses == [200] * 100 and len(server.requests) == 100


def test_runs_as_a_subprocess() -> None:
    command = [sys.executable, "-m", "tests.fakes.openai_server", "--port", "0", "--latency-ms", "1"]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        assert line.startswith("LISTENING http://127.0.0.1:") and line.endswith("/v1")
        base_url = line.removeprefix("LISTENING ")
        response = httpx.post(f"{base_url}/chat/completions", json=CHAT, timeout=SAFETY_S)
        assert response.json()["choices"][0]["message"]["content"] == "The answer is 42."
    finally:
        process.terminate()
        process.wait(timeout=SAFETY_S)


async def test_the_gate_holds_answers_until_released_in_arrival_order() -> None:
    answered: list[int] = []

    async def ask(client: httpx.AsyncClient, url: str, i: int) -> None:
        await client.post(url, json={**CHAT, "seed": i})
        answered.append(i)

    async with open_fake_openai() as server, httpx.AsyncClient() as client:
        url = f"{server.base_url}/chat/completions"
        server.gate.hold()
        server.gate.release(1)  # a permit before anyone arrives: the first answer goes at once
        async with trio.open_nursery() as nursery:
            for i in range(4):
                nursery.start_soon(ask, client, url, i)
                await server.wait_received(i + 1)  # arrival order is the order they were sent
            await trio.testing.wait_all_tasks_blocked()
            assert answered == [0]
            server.gate.release(2)
            await trio.testing.wait_all_tasks_blocked()
            assert sorted(answered) == [0, 1, 2]
            server.gate.open()
    assert sorted(answered) == [0, 1, 2, 3]
    assert [r.body["seed"] for r in server.requests] == [0, 1, 2, 3]
