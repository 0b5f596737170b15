"""kill -9 of a real engine process, then resume, for each repeat strategy and stopping rule: every
trial ran once (a result or a skip, never both, never two), every judge verdict and look was made
once, and the report equals the clean run's.

Event-driven, like tests/test_cli_lifecycle.py: the subject and the judge are two fake servers in
this test's Trio loop. The judge's gate is held, so the engine is killed while a grade (or a
pairwise verdict) it asked for is outstanding: outputs completed before the kill wait for their
grade: the resume path, where pass_at_k must not run a repeat a second time.
"""

from __future__ import annotations

import json
import re
import signal
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from engine.events import kinds as k
from tests.fakes.openai_server import FakeOpenAI, open_fake_openai
from tests.test_cli_lifecycle import Engine, answer, events_of, strip_volatile

CASES = 4


def judge(body: dict[str, Any]) -> str:
    """A rubric judge that passes answers naming the city, and a pairwise one preferring them."""
    prompt = body["messages"][-1]["content"]
    if "<response_a>" in prompt:
        a, b = (re.search(f"<response_{x}>(.*?)</response_{x}>", prompt, re.S) for x in "ab")
        good_a, good_b = ("It is" in m.group(1) if m else False for m in (a, b))
        winner = "tie" if good_a == good_b else ("A" if good_a else "B")
        return json.dumps({"winner": winner, "reason": "names the city"})
    mark = 10 if "It is" in prompt else 1
    names = ("accuracy", "completeness", "clarity", "relevance")
    return json.dumps({"scores": {n: mark for n in names}, "reason": "r"})


def experiment(subject: str, judge_url: str, strategy: str) -> str:
    judge_target = f'{{ kind = "openai", base_url = "{judge_url}", model = "j", max_retries = 0 }}'
    graders = f'[[graders]]\nkind = "judge"\njudge = {judge_target}\n'
    repeat = "[repeat]\ncount = 3\n"
    extra = ""
    if strategy == "pass_at_k":
        repeat = '[repeat]\ncount = 3\nstrategy = "pass_at_k"\nearly_exit = true\n'
    elif strategy == "sequential":
        repeat, extra = "[repeat]\ncount = 4\n", '[stopping]\nrule = "sequential"\nlooks = 2\n'
    elif strategy == "pairwise":
        pairwise = f'[[graders]]\nkind = "pairwise"\nname = "side"\njudge = {judge_target}\n'
        graders = f'[[graders]]\nkind = "contains"\nvalue = "It is"\n{pairwise}'
    cases = "".join(
        f'[[cases]]\nid = "c{i}"\nprompt = "Which city is number {i}? City{i}?"\nexpected = "City{i}"\n'
        for i in range(CASES)
    )
    return (
        f'name = "kill-{strategy}"\nseed = 5\n[target]\nkind = "openai"\nbase_url = "{subject}"\n'
        f'model = "m"\n'
        f"max_retries = 0\n[execution]\nconcurrency = 1\njudge_concurrency = 1\n"
        f'[[variants]]\nname = "warm"\nparams = {{ temperature = 0.7 }}\n'
        f'[[variants]]\nname = "cold"\nparams = {{ temperature = 0.1 }}\n'
        f"{repeat}{extra}{graders}{cases}"
    )


def ledger(store: Path, run_id: str) -> tuple[Counter[Any], Counter[Any], Counter[Any]]:
    """Results and skips per trial, and verdicts and looks per key, in the run's log."""
    events = events_of(
        store, run_id, k.TrialCompleted, k.TrialFailed, k.TrialSkipped, k.PairwiseJudged, k.LookDecided
    )
    results = Counter(
        (e.variant, e.case, e.repeat) for e in events if isinstance(e, k.TrialCompleted | k.TrialFailed)
    )
    skips = Counter((e.variant, e.case, e.repeat) for e in events if isinstance(e, k.TrialSkipped))
    decided = Counter(
        ("look", e.look) if isinstance(e, k.LookDecided) else (e.variant, e.case, e.repeat)
        for e in events
        if isinstance(e, k.PairwiseJudged | k.LookDecided)
    )
    return results, skips, decided


async def run_to_end(cwd: Path, name: str, *args: str) -> Any:
    engine = await Engine(cwd, name).start(*args, "--json", "--store", "st")
    code, out, err = await engine.finish()
    assert code in (0, 1), err  # 1: some trials failed their grade (a verdict, not an error)
    return strip_volatile(json.loads(out))


async def kill_at_judge_request(
    subject: FakeOpenAI, judge_server: FakeOpenAI, cwd: Path, run_id: str, nth: int
) -> None:
    subject.gate.open()
    judge_server.gate.hold()
    before = len(judge_server.requests)
    engine = await Engine(cwd, run_id).start("run", "exp.toml", "--run-id", run_id, "--json", "--store", "st")
    judge_server.gate.release(nth - 1)  # the first grades are answered...
    await judge_server.wait_received(before + nth)  # ...and the engine waits on this one now
    engine.signal(signal.SIGKILL)
    await engine.finish()
    judge_server.gate.open()


@pytest.mark.parametrize("strategy", ["pass_at_k", "sequential", "pairwise"])
async def test_kill_9_while_a_grade_is_outstanding_then_resume_runs_each_trial_once(
    tmp_path: Path, strategy: str
) -> None:
    async with open_fake_openai(answer=answer) as subject, open_fake_openai(answer=judge) as judge_server:
        (tmp_path / "exp.toml").write_text(experiment(subject.base_url, judge_server.base_url, strategy))
        expected = await run_to_end(tmp_path, "ref", "run", "exp.toml", "--run-id", "ref")
        clean = ledger(tmp_path / "st", "ref")
        assert max(clean[0].values()) == 1
        subject_calls = len(subject.requests)
        # early: while the first grade is asked for; later: a few grades (pairwise: verdicts) in
        for point, nth in enumerate((1, 4)):
            run_id = f"killed-{point}"
            calls_before = len(subject.requests)
            await kill_at_judge_request(subject, judge_server, tmp_path, run_id, nth)
            report = await run_to_end(tmp_path, f"resume-{point}", "run", "--resume", run_id)
            results, skips, decided = ledger(tmp_path / "st", run_id)
            assert max(results.values()) == 1 and not set(results) & set(skips), (strategy, point)
            assert (results, skips, decided) == clean, (strategy, point)
            assert report == expected, (strategy, point)
            # trials in flight at the kill (at most 2 with concurrency 1: the scheduler's bound) are
            # asked again, nothing else is
            assert len(subject.requests) - calls_before <= subject_calls + 2, (strategy, point)
