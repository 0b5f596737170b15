"""OpenAI-compatible and Anthropic targets over real sockets against the fake server."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from engine.actors.targets.anthropic import AnthropicTarget
from engine.actors.targets.openai import OpenAITarget
from engine.actors.targets.target_protocol import TargetError, TargetRequest
from engine.events.spec import CaseSpec, Price, VariantSpec
from tests.fakes.openai_server import open_fake_openai
from tests.shims import target_spec

SECRET = "sk-test-DO-NOT-LEAK-4f1c2e"


def request(**overrides: object) -> TargetRequest:
    values: dict[str, object] = {
        "run_id": "r", "variant": VariantSpec(name="v"), "case": CaseSpec(id="c", prompt="What is 6 x 7?"),
        "repeat": 0, "prompt": "What is 6 x 7?", "system": "Be brief.", "context": "Arithmetic.",
        "params": {"temperature": 0.2, "top_p": 0.9, "top_k": 40, "max_tokens": 16, "presence_penalty": 0.1},
        "seed": 77, "timeout_s": 5.0,
    }  # fmt: skip
    values.update(overrides)
    return TargetRequest(**values)  # type: ignore[arg-type]


async def test_openai_body_usage_cost_and_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_KEY", SECRET)
    async with open_fake_openai() as server:
        spec = target_spec(
            kind="openai", base_url=server.base_url, model="m1", api_key_env="FAKE_KEY",
            price=Price(input_per_mtok=1.0, output_per_mtok=2.0),
        )  # fmt: skip
        target = OpenAITarget(spec)
        response = await target.call(request())
        await target.aclose()
    sent = server.requests[0]
    assert sent.path == "/v1/chat/completions" and sent.headers["authorization"] == f"Bearer {SECRET}"
    assert sent.body["model"] == "m1" and sent.body["seed"] == 77 and sent.body["top_k"] == 40
    assert [m["role"] for m in sent.body["messages"]] == ["system", "system", "user"]
    assert response.text == "The answer is 42." and response.tokens_out == 4
    # the executor prices every response in one place, from the target's price
    assert spec.price is not None
    assert spec.price.cost(response.tokens_in, response.tokens_out) == pytest.approx(
        (response.tokens_in * 1.0 + 4 * 2.0) / 1e6
    )


async def test_extra_params_are_sent_only_when_named() -> None:
    params = {"temperature": 0.2, "min_p": 0.05, "retrieval_top_k": 8}
    async with open_fake_openai() as server:
        for extra in ([], ["min_p"]):
            target = OpenAITarget(target_spec(kind="openai", base_url=server.base_url, extra_params=extra))
            await target.call(request(params=params))
            await target.aclose()
    plain, extended = (r.body for r in server.requests)
    assert "min_p" not in plain and extended["min_p"] == 0.05
    assert "retrieval_top_k" not in extended  # an app-level parameter stays with the app


@pytest.mark.parametrize(
    ("fault", "kind", "retryable", "error_class"),
    [
        ("429", "infra", True, "http_429"),
        ("500", "infra", True, "http_5xx"),
        ("404", "model", False, "http_4xx"),
        ("malformed", "infra", False, "malformed_response"),
        ("empty", "infra", False, "malformed_response"),
        ("close", "infra", True, "network"),
    ],
)
async def test_openai_faults_become_classified_errors(
    fault: str, kind: str, retryable: bool, error_class: str
) -> None:
    """Only transient infrastructure errors are retryable; the rest are recorded once."""
    async with open_fake_openai(faults=[fault]) as server:
        target = OpenAITarget(target_spec(kind="openai", base_url=server.base_url))
        with pytest.raises(TargetError) as caught:
            await target.call(request())
        await target.aclose()
    error = caught.value
    assert (error.kind, error.retryable, error.error_class) == (kind, retryable, error_class)
    if fault == "429":
        assert caught.value.retry_after == 1.0 and caught.value.throttled


async def test_openai_hang_times_out() -> None:
    async with open_fake_openai(faults=["hang"]) as server:
        target = OpenAITarget(target_spec(kind="openai", base_url=server.base_url))
        with pytest.raises(TargetError) as caught:
            await target.call(request(timeout_s=0.3))
        await target.aclose()
    assert caught.value.kind == "timeout" and not caught.value.retryable


async def test_nothing_listening_is_a_connect_error_naming_the_address() -> None:
    target = OpenAITarget(target_spec(kind="openai", base_url="http://127.0.0.1:9/v1"))
    with pytest.raises(TargetError) as caught:
        await target.call(request())
    await target.aclose()
    assert caught.value.error_class == "connect" and caught.value.retryable
    assert caught.value.message == "connect: connection refused to 127.0.0.1:9"


async def test_missing_key_variable_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOPE_KEY", raising=False)
    with pytest.raises(TargetError, match="NOPE_KEY"):
        OpenAITarget(target_spec(kind="openai", base_url="http://127.0.0.1:9/v1", api_key_env="NOPE_KEY"))


async def test_anthropic_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_KEY", SECRET)
    async with open_fake_openai() as server:
        target = AnthropicTarget(
            target_spec(kind="anthropic", base_url=server.base_url, api_key_env="FAKE_KEY")
        )
        response = await target.call(request())
        await target.aclose()
    sent = server.requests[0]
    assert sent.path == "/v1/messages" and sent.headers["x-api-key"] == SECRET
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert sent.body["system"] == "Be brief.\n\nArithmetic." and sent.body["max_tokens"] == 16
    assert response.text == "The answer is 42." and response.tokens_in > 0


async def test_no_key_bytes_reach_the_log_or_blobs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from engine.api import open_engine, spec_from_dict

    monkeypatch.setenv("FAKE_KEY", SECRET)

    def echo_headers(body: dict) -> str:
        return "The answer is 42."

    async with open_fake_openai(
        answer=echo_headers, faults=lambda i, body: "500" if i % 5 == 0 else None
    ) as server:
        spec = spec_from_dict(
            {
                "name": "keys",
                "target": {"kind": "openai", "base_url": server.base_url, "api_key_env": "FAKE_KEY"},
                "cases": [{"id": f"c{i}", "prompt": "q", "expected": "42"} for i in range(10)],
            }
        )
        async with open_engine(tmp_path / "store") as eng:
            await eng.run(spec)
    stored = b"".join(p.read_bytes() for p in (tmp_path / "store").iterdir())
    assert SECRET.encode() not in stored and b"FAKE_KEY" in stored
    assert all(r.headers["authorization"] == f"Bearer {SECRET}" for r in server.requests)


async def test_runs_finish_through_every_kind_of_fault(
    tmp_path: Path, autojump_clock: trio.abc.Clock
) -> None:
    from engine.api import open_engine, spec_from_dict

    plan = ["429", "500", "hang", "close", "malformed"] * 4
    async with open_fake_openai(faults=lambda i, body: plan[i] if i < len(plan) else None) as server:
        spec = spec_from_dict(
            {
                "name": "faults",
                "target": {"kind": "openai", "base_url": server.base_url, "timeout_s": 2, "max_retries": 2},
                "cases": [{"id": f"c{i}", "prompt": "q", "expected": "42"} for i in range(12)],
                "budget": {"max_trials": 10},
                "execution": {"concurrency": 4},
            }
        )
        async with open_engine(tmp_path) as eng:
            report = await eng.run(spec)
    (variant,) = report.variants
    assert report.budget_exhausted == ["max_trials"] and variant.trials == 10
    assert variant.errors + variant.scored == 10 and variant.errors >= 1
