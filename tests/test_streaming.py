"""Streamed answers (stream = true) over real sockets: time to first token and tokens per second as
the fake server paces them on trio's autojump clock (virtual time: exact, whatever the machine's load),
usage from the last chunk, the two timeouts, and a stream cut mid-answer retried as a network error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import trio

from engine.actors.targets.anthropic import AnthropicTarget, MessageEvents
from engine.actors.targets.openai import ChatChunks, OpenAITarget
from engine.actors.targets.retry import call_with_retries
from engine.actors.targets.target_protocol import TargetError
from engine.api import open_engine, spec_from_dict
from engine.events.report import Pace
from engine.presentation.templates import render
from engine.web.run_page import figures
from tests.conftest import run_engine
from tests.fakes.openai_server import open_fake_openai
from tests.shims import target_spec
from tests.test_http_targets import request

TEN_WORDS = "one two three four five six seven eight nine ten"


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_ttft_and_tokens_per_second_match_the_servers_pace(
    kind: str, autojump_clock: trio.abc.Clock
) -> None:
    async with open_fake_openai(latency_ms=0, answer=lambda body: TEN_WORDS) as server:
        server.first_token_ms, server.token_gap_ms = 300.0, 40.0  # 25 tokens/s after the first
        made = OpenAITarget if kind == "openai" else AnthropicTarget
        target = made(target_spec(kind=kind, base_url=server.base_url, stream=True))
        response = await target.call(request())
        await target.aclose()
    assert response.text == TEN_WORDS and response.tokens_out == 10 and response.tokens_in > 0
    assert response.ttft_ms == pytest.approx(300.0, abs=5)
    assert response.tokens_per_s == pytest.approx(25.0, rel=0.05)
    sent = server.requests[0].body
    assert sent["stream"] is True
    if kind == "openai":  # the usage comes in a last chunk only when asked for
        assert sent["stream_options"] == {"include_usage": True}


async def test_without_the_usage_chunk_the_tokens_are_the_streamed_events(
    autojump_clock: trio.abc.Clock,
) -> None:
    async with open_fake_openai(answer=lambda body: TEN_WORDS) as server:
        server.first_token_ms, server.token_gap_ms = 100.0, 50.0
        spec = target_spec(kind="openai", base_url=server.base_url, stream=True, stream_usage=False)
        target = OpenAITarget(spec)
        response = await target.call(request())
        await target.aclose()
    assert "stream_options" not in server.requests[0].body  # for a server that refuses the field
    assert response.tokens_out == 0 and response.tokens_per_s == pytest.approx(20.0, rel=0.05)


async def test_a_stream_cut_mid_answer_is_a_network_error_and_is_retried(
    autojump_clock: trio.abc.Clock,
) -> None:
    async with open_fake_openai(faults=["cut", "cut"]) as server:
        target = OpenAITarget(target_spec(kind="openai", base_url=server.base_url, stream=True))
        with pytest.raises(TargetError) as cut:
            await target.call(request())
        assert cut.value.error_class == "network" and cut.value.retryable
        response = await call_with_retries(target, request(), max_retries=3, rng=1)
        await target.aclose()
    assert response.attempts == 2 and response.text == "The answer is 42." and response.ttft_ms is not None


async def test_a_gap_between_tokens_past_idle_timeout_is_a_timeout(autojump_clock: trio.abc.Clock) -> None:
    async with open_fake_openai(answer=lambda body: TEN_WORDS) as server:
        server.token_gap_ms = 2000.0
        spec = target_spec(kind="openai", base_url=server.base_url, stream=True, idle_timeout_s=1.0)
        target = OpenAITarget(spec)
        started = trio.current_time()
        with pytest.raises(TargetError) as late:
            await target.call(request(timeout_s=30.0))
        await target.aclose()
    assert (
        late.value.kind == "timeout" and "no streamed piece within 1 s (idle_timeout_s)" in late.value.message
    )
    assert trio.current_time() - started == pytest.approx(1.0, abs=0.01)  # not the call's 30 s


async def test_a_late_head_past_first_byte_timeout_is_a_timeout(autojump_clock: trio.abc.Clock) -> None:
    async with open_fake_openai(latency_ms=5000) as server:
        spec = target_spec(kind="openai", base_url=server.base_url, stream=True, first_byte_timeout_s=2.0)
        target = OpenAITarget(spec)
        with pytest.raises(TargetError) as late:
            await target.call(request(timeout_s=30.0))
        await target.aclose()
    assert (
        late.value.kind == "timeout"
        and "no first byte within 2 s (first_byte_timeout_s)" in late.value.message
    )


async def test_an_error_answer_to_a_streamed_request_is_classed_as_any_other() -> None:
    async with open_fake_openai(faults=["429", "400"]) as server:
        target = AnthropicTarget(target_spec(kind="anthropic", base_url=server.base_url, stream=True))
        for error_class in ("http_429", "http_4xx"):
            with pytest.raises(TargetError) as refused:
                await target.call(request())
            assert refused.value.error_class == error_class
        await target.aclose()


def test_streaming_through_a_proxy_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.invalid:3128")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    with pytest.raises(TargetError) as refused:
        OpenAITarget(target_spec(kind="openai", base_url="https://api.example.com/v1", stream=True))
    assert refused.value.kind == "config" and "HTTPS_PROXY" in refused.value.message


def _spec(base_url: str) -> dict[str, object]:
    return {
        "name": "pace",
        "target": {"kind": "openai", "base_url": base_url, "stream": True, "max_retries": 0},
        "variants": [{"name": "slow", "model": "slow"}, {"name": "fast", "model": "fast"}],
        "cases": [{"id": f"c{i}", "prompt": f"question {i}", "expected": "ten"} for i in range(6)],
        "graders": [{"kind": "contains"}],
        "repeat": {"count": 2},
    }


async def test_a_streamed_run_reports_pace_per_variant_in_every_format(
    tmp_path: Path, autojump_clock: trio.abc.Clock
) -> None:
    store = tmp_path / "st"
    async with open_fake_openai(answer=lambda body: TEN_WORDS) as server:
        server.pace_by_model = {"slow": (800.0, 100.0), "fast": (200.0, 20.0)}
        async with open_engine(store) as eng:
            report = await eng.run(spec_from_dict(_spec(server.base_url)), run_id="r")
    slow, fast = report.variants
    assert isinstance(slow.ttft_ms, Pace) and isinstance(fast.ttft_ms, Pace)
    assert slow.ttft_ms.n == 12 and slow.ttft_ms.mean == pytest.approx(800, abs=5)
    assert fast.ttft_ms.mean == pytest.approx(200, abs=5) and fast.ttft_ms.p95 == pytest.approx(200, abs=5)
    assert isinstance(fast.tokens_per_s, Pace) and fast.tokens_per_s.mean == pytest.approx(50, rel=0.05)
    assert fast.ttft_ms.ci95 is not None and fast.ttft_ms.ci95[0] <= fast.ttft_ms.mean <= fast.ttft_ms.ci95[1]
    as_json = json.loads(run_engine("report", "r", "--json", "--store", str(store), cwd=tmp_path).stdout)
    assert [v["ttft_ms"]["mean"] for v in as_json["variants"]] == [slow.ttft_ms.mean, fast.ttft_ms.mean]
    for fmt in ("terminal", "markdown", "html"):
        args = ("--format", fmt) if fmt != "terminal" else ()
        shown = run_engine("report", "r", *args, "--store", str(store), cwd=tmp_path).stdout.decode()
        assert "time to first token" in shown and "TTFT ms" in shown, fmt
    exported = run_engine("export", "r", "--format", "jsonl", "--store", str(store), cwd=tmp_path).stdout
    trials = [json.loads(line) for line in exported.decode().splitlines()]
    assert all(t["ttft_ms"] == pytest.approx(800 if t["variant"] == "slow" else 200, abs=5) for t in trials)
    live = render("run_report.html", **figures(report, ""))  # the part of the run page a live run refreshes
    assert "time to first token" in live and f"{fast.ttft_ms.mean:.1f}" in live


async def test_compare_gates_a_slower_first_token(tmp_path: Path, autojump_clock: trio.abc.Clock) -> None:
    store = tmp_path / "st"
    spec = {**_spec("{url}"), "variants": [{"name": "m", "model": "m"}]}
    async with open_fake_openai(answer=lambda body: TEN_WORDS) as server:
        spec["target"] = {**spec["target"], "base_url": server.base_url}  # type: ignore[dict-item]
        async with open_engine(store) as eng:
            for run_id, first_ms in (("base", 200.0), ("same", 200.0), ("slow", 600.0)):
                server.pace_by_model = {"m": (first_ms, 20.0)}
                await eng.run(spec_from_dict(spec), run_id=run_id)
    slow = run_engine("compare", "base", "slow", "--gate", "--json", "--store", str(store), cwd=tmp_path)
    rows = {m["metric"]: m for m in json.loads(slow.stdout)["metrics"]}
    assert slow.returncode == 1 and rows["p95_ttft_ms"]["regressed"]
    assert rows["p95_ttft_ms"]["baseline"] == pytest.approx(200, abs=5) and rows["p95_ttft_ms"]["run_margin"]
    assert rows["tokens_per_s"]["candidate"] == pytest.approx(50, rel=0.05)
    same = run_engine("compare", "base", "same", "--gate", "--store", str(store), cwd=tmp_path)
    assert same.returncode == 0 and "p95_ttft_ms" in same.stdout.decode()
    lenient = ("--max-p95-ttft-increase", "5", "--max-p95-latency-increase", "5")  # total latency rose too
    assert (
        run_engine(
            "compare", "base", "slow", "--gate", *lenient, "--store", str(store), cwd=tmp_path
        ).returncode
        == 0
    )


def test_stream_through_a_proxy_or_on_a_kind_that_cannot_is_refused_before_the_run(tmp_path: Path) -> None:
    experiment = tmp_path / "p.toml"
    experiment.write_text(
        'name = "p"\n[target]\nkind = "openai"\nbase_url = "https://api.example.com/v1"\n'
        'model = "m"\nstream = true\n'
        '[[cases]]\nid = "c"\nprompt = "q"\nexpected = "a"\n'
    )
    proxied = run_engine(
        "run", str(experiment), "--store", "st", cwd=tmp_path, HTTPS_PROXY="http://u:pw@proxy:3128"
    )
    said = proxied.stderr.decode()
    assert (
        proxied.returncode == 2
        and said.count("\n") == 1
        and "target.stream" in said
        and "HTTPS_PROXY" in said
    )
    assert "pw" not in said and not (tmp_path / "st").exists()
    experiment.write_text(
        experiment.read_text().replace(
            'kind = "openai"\nbase_url = "https://api.example.com/v1"',
            'kind = "python"\ncallable = "json:dumps"',
        )
    )
    assert "stream" in run_engine("validate", str(experiment), cwd=tmp_path).stderr.decode()


def test_a_broken_or_erroring_stream_is_classed() -> None:
    chunks = ChatChunks()
    with pytest.raises(TargetError) as broken:
        chunks.on_event("message", '{"choices": [ not json')
    assert broken.value.error_class == "malformed_response"
    with pytest.raises(TargetError) as typed:
        chunks.on_event("message", '{"choices": [{"delta": {"content": 7}}]}')
    assert typed.value.error_class == "malformed_response"
    with pytest.raises(TargetError) as failed:  # an error sent after the 200 head: a server error, retried
        chunks.on_event("message", '{"error": {"message": "overloaded"}}')
    assert failed.value.error_class == "http_5xx" and failed.value.retryable
    events = MessageEvents()
    assert events.on_event("ping", "{}") == ""
    with pytest.raises(TargetError) as overloaded:
        events.on_event("error", '{"type": "error", "error": {"type": "overloaded_error"}}')
    assert overloaded.value.error_class == "http_5xx" and "overloaded_error" in overloaded.value.message
