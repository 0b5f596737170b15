"""Budgets are hard caps, counted where the money goes: at the real-socket fake model server.

Every request the server received counts in full (prompt and answer), also the ones a kill -9 cut
off before they were answered: the server may have spent them. The engine runs in a subprocess;
the kill comes once the server holds requests in flight (gate held: events, not the clock), and
the resumed run must count those as spent.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.openai_server import FakeOpenAI, open_fake_openai
from tests.test_cli_lifecycle import Engine

CASES, REPEATS = 12, 3
PRICE = "price = { input_per_mtok = 1000000.0, output_per_mtok = 2000000.0 }"  # $1 a word in, $2 out


def answer(body: dict[str, Any]) -> str:
    """Lengths vary by trial (its seed) and never pass the request's max_tokens, when it sets one."""
    words = 1 + body["seed"] % 7
    return " ".join(["word"] * min(words, body.get("max_tokens") or words))


def words(text: str) -> int:
    return len(text.split())


def spent_at_server(server: FakeOpenAI) -> tuple[int, int, float]:
    """(requests, tokens, dollars) over every request received, as the server counts usage."""
    tokens = cost = 0.0
    for request in server.requests:
        prompt = words(" ".join(str(m.get("content", "")) for m in request.body["messages"]))
        output = words(answer(request.body))
        tokens += prompt + output
        cost += prompt * 1.0 + output * 2.0
    return len(server.requests), int(tokens), cost


def experiment(base_url: str, budget: str, bounded: bool = True) -> str:
    cases = "\n".join(  # prompts of different lengths: a reservation scales with the prompt
        f'[[cases]]\nid = "c{i}"\nprompt = "Tell me about topic {i}{" in detail" * (i % 4)}."\n'
        'expected = "word"'
        for i in range(CASES)
    )
    params = "[params]\nmax_tokens = 5\n" if bounded else ""
    return (
        f'name = "caps"\nseed = 3\n[target]\nkind = "openai"\nbase_url = "{base_url}"\nmodel = "m"\n'
        f"max_retries = 0\n{PRICE}\n[execution]\nconcurrency = 4\n{params}[budget]\n{budget}\n"
        f'[[variants]]\nname = "a"\n[[variants]]\nname = "b"\nsystem = "Be brief."\n'
        f"[repeat]\ncount = {REPEATS}\n{cases}\n"
    )


async def run(cwd: Path, *args: str) -> dict[str, Any]:
    code, out, err = await (await Engine(cwd, args[1]).start(*args, "--json", "--store", "st")).finish()
    assert code in (0, 1) and out, err
    return json.loads(out)


CAPS = [
    ("max_tokens = 300", 1, 300, True),
    ("max_tokens = 300", 1, 300, False),  # no max_tokens param: the largest spends seen are reserved
    ("max_cost_usd = 400.0", 2, 400.0, True),
    ("max_cost_usd = 400.0", 2, 400.0, False),
]


@pytest.mark.parametrize(("budget", "index", "limit", "bounded"), CAPS)
async def test_the_server_never_sees_more_than_a_budget(
    tmp_path: Path, budget: str, index: int, limit: float, bounded: bool
) -> None:
    async with open_fake_openai(answer=answer) as server:
        (tmp_path / "exp.toml").write_text(experiment(server.base_url, budget, bounded))
        report = await run(tmp_path, "run", "exp.toml", "--run-id", "r")
        seen = spent_at_server(server)[index]
        name = budget.split()[0]
        assert seen <= limit, (name, seen)
        assert seen > limit * 0.85, (name, seen)  # the cap, not a timid stop far below it
        assert report["budget_exhausted"] == [name] and report["is_partial"]
        (stop,) = report["budget_stops"]
        assert stop["budget"] == name and stop["used"] <= limit < stop["used"] + stop["reserved"]
        assert "stopped early: the next trial could spend up to" in stop["note"]


KILLED = [
    ("max_trials = 30", 0, 30),
    ("max_tokens = 330", 1, 330),
    ("max_cost_usd = 450.0", 2, 450.0),
]


@pytest.mark.parametrize(("budget", "index", "limit"), KILLED)
async def test_trials_in_flight_at_a_kill_9_count_as_spent_on_resume(
    tmp_path: Path, budget: str, index: int, limit: float
) -> None:
    async with open_fake_openai(answer=answer) as server:
        (tmp_path / "exp.toml").write_text(experiment(server.base_url, budget))
        server.gate.hold()
        engine = await Engine(tmp_path, "killed").start("run", "exp.toml", "--run-id", "r", "--store", "st")
        server.gate.release(12)
        await server.wait_received(12 + 3)  # three requests in flight, unanswered
        engine.signal(signal.SIGKILL)
        await engine.finish()
        in_flight = len(server.requests) - 12
        assert in_flight >= 3
        server.gate.open()
        report = await run(tmp_path, "run", "--resume", "r")
        seen = spent_at_server(server)[index]
        assert seen <= limit, (budget, seen, in_flight)
        assert report["budget_exhausted"] == [budget.split()[0]]
