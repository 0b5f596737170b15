"""HTTP targets honour the proxy the environment names, as httpx-based clients do: a company network
that routes model traffic through a proxy still reaches the model."""

from __future__ import annotations

import json
from functools import partial

import pytest
import trio

from engine.actors.targets.http.proxied import proxy_for
from engine.actors.targets.openai import OpenAITarget
from tests.shims import target_spec
from tests.test_http_targets import request

ANSWER = {
    "choices": [{"message": {"role": "assistant", "content": "via the proxy"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 3, "completion_tokens": 3},
}


async def _answer_one(stream: trio.SocketStream, seen: list[str]) -> None:
    """A forward proxy that answers itself: it records the request line it was sent."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += await stream.receive_some(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    length = next(
        int(v) for n, _, v in (ln.partition(": ") for ln in lines[1:]) if n.lower() == "content-length"
    )
    while len(body) < length:
        body += await stream.receive_some(65536)
    seen.append(lines[0])
    content = json.dumps(ANSWER).encode()
    reply = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s"
    await stream.send_all(reply % (len(content), content))
    await stream.aclose()


@pytest.fixture
def no_proxy_settings(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    return monkeypatch


async def test_a_target_goes_through_the_proxy_the_environment_names(
    no_proxy_settings: pytest.MonkeyPatch,
) -> None:
    seen: list[str] = []
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(
            partial(trio.serve_tcp, lambda s: _answer_one(s, seen), 0, host="127.0.0.1")
        )
        port = listeners[0].socket.getsockname()[1]
        no_proxy_settings.setenv("HTTP_PROXY", f"http://127.0.0.1:{port}")
        # the model's host does not even resolve: only the proxy can answer
        target = OpenAITarget(target_spec(kind="openai", base_url="http://model.invalid/v1"))
        response = await target.call(request())
        await target.aclose()
        nursery.cancel_scope.cancel()
    assert seen == ["POST http://model.invalid/v1/chat/completions HTTP/1.1"]
    assert response.text == "via the proxy"


def test_no_proxy_exempts_a_host_and_schemes_pick_their_proxy(no_proxy_settings: pytest.MonkeyPatch) -> None:
    assert proxy_for("https://api.example.com/v1") is None
    no_proxy_settings.setenv("HTTPS_PROXY", "http://proxy:3128")
    assert proxy_for("https://api.example.com/v1") == "http://proxy:3128"
    assert proxy_for("http://api.example.com/v1") is None  # only https is proxied
    no_proxy_settings.setenv("NO_PROXY", "example.com")
    assert proxy_for("https://api.example.com/v1") is None


def test_without_a_proxy_variable_urllib_is_not_read(no_proxy_settings: pytest.MonkeyPatch) -> None:
    """The fast path (no *_proxy variable: no proxy, urllib.request not imported) says what urllib
    says of the same environment; a variable of any case or scheme takes the plain path."""
    import os
    import subprocess
    import sys
    import urllib.request

    for name in [n for n in os.environ if n.lower().endswith("_proxy")]:
        no_proxy_settings.delenv(name)
    assert urllib.request.getproxies_environment() == {} and proxy_for("https://api.example.com") is None
    no_proxy_settings.setenv("Ftp_Proxy", "http://proxy:21")  # read by urllib, proxies nothing here
    assert proxy_for("https://api.example.com") is None
    no_proxy_settings.setenv("all_proxy", "http://proxy:3128")
    assert proxy_for("https://api.example.com") == "http://proxy:3128"
    code = (
        "import sys; from engine.actors.targets.http.proxied import proxy_for; "
        "assert proxy_for('https://api.example.com') is None; print('urllib.request' in sys.modules)"
    )
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
