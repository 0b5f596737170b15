"""The README's provider recipes, each as written, against a fake server holding requests to that
provider's shape (tests/fakes/provider_shapes.py): the recipe's request is accepted, whole and
streamed; the provider's refusal of a wrong request and its rate-limit answer are classed as such."""

from __future__ import annotations

import re
import tomllib
import urllib.parse
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio

from engine.actors.targets.openai import OpenAITarget
from engine.actors.targets.target_protocol import TargetError
from engine.events.spec import TargetSpec
from tests.fakes.openai_server import FakeOpenAI, open_fake_openai
from tests.fakes.provider_shapes import KEY, SHAPES
from tests.test_http_targets import request

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()
RECIPES = {
    found[1]: tomllib.loads(found[2])["target"]
    for found in re.finditer(r"```toml\n# recipe: (\w+)[^\n]*\n(.*?)```", README, re.S)
}
KEY_VARIABLES = ("AZURE_OPENAI_API_KEY", "GEMINI_API_KEY", "VLLM_API_KEY", "OPENROUTER_API_KEY")


def test_every_provider_has_a_recipe() -> None:
    assert set(RECIPES) == set(SHAPES)


def recipe_target(name: str, server: FakeOpenAI, **changes: Any) -> OpenAITarget:
    """The recipe as written, its host swapped for the fake server's (the path kept)."""
    fields = {**RECIPES[name], **changes}
    path = urllib.parse.urlsplit(fields["base_url"]).path
    fields["base_url"] = f"http://127.0.0.1:{server.port}{path}"
    fields.setdefault("model", "gpt-4o")  # Azure's model is the deployment's; the body's is not read
    return OpenAITarget(msgspec.convert(fields, TargetSpec))  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in KEY_VARIABLES:
        monkeypatch.setenv(variable, KEY)


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("name", sorted(SHAPES))
async def test_the_recipe_is_what_the_provider_accepts(
    name: str, stream: bool, autojump_clock: trio.abc.Clock
) -> None:
    async with open_fake_openai() as server:
        server.shape = SHAPES[name]
        target = recipe_target(name, server, stream=stream)
        response = await target.call(request())
        await target.aclose()
    assert response.text == "The answer is 42." and response.tokens_out == 4
    assert (response.ttft_ms is not None) == stream
    if name == "vllm":
        assert "min_p" not in server.requests[0].body  # named in extra_params, sent only when set


@pytest.mark.parametrize("name", sorted(SHAPES))
async def test_a_request_off_the_providers_shape_is_refused_as_it_would_be(name: str) -> None:
    shape = SHAPES[name]
    wrong = {"model": "not-pulled"} if shape.models else {"headers": {}, "api_key_env": None}
    if not shape.models and not shape.headers:  # llama.cpp takes any request: a wrong path instead
        wrong = {"base_url": "http://x/v2"}
    async with open_fake_openai() as server:
        server.shape = shape
        target = recipe_target(name, server, **wrong)
        with pytest.raises(TargetError) as refused:
            await target.call(request())
        await target.aclose()
    assert refused.value.error_class == "http_4xx" and not refused.value.retryable
    assert "request refused" in refused.value.message


@pytest.mark.parametrize(("name", "wait"), [("azure", 1.5), ("openrouter", 3.0), ("gemini", None)])
async def test_a_providers_rate_limit_is_a_throttle_with_its_wait(name: str, wait: float | None) -> None:
    async with open_fake_openai(faults=["429"]) as server:
        server.shape = SHAPES[name]
        target = recipe_target(name, server)
        with pytest.raises(TargetError) as limited:
            await target.call(request())
        await target.aclose()
    assert limited.value.error_class == "http_429" and limited.value.throttled and limited.value.retryable
    assert limited.value.retry_after == wait
