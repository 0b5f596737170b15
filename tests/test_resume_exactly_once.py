"""Exactly once, for every repeat strategy and stopping rule: a run cut off after any event (what a
kill -9 leaves: a prefix of the log) and resumed runs each trial once and reports what the clean
run reported.

The cut points are every event boundary of a clean run's log (a superset of what a kill can leave:
a kill leaves whole batches), the resumed run is the real runtime in process on a copy of that
prefix, and the subject is deterministic per trial, so every cut is checked and nothing depends on
timing. The kill -9 of a real process is tests/test_cli_lifecycle.py's (with a grader held).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import pytest

from engine.actors.targets.target_protocol import TargetRequest
from engine.api import open_engine, spec_from_dict
from engine.events import kinds as k
from engine.events.codec import decode, to_json
from engine.store.memory import MemoryStore
from engine.store.projection import run_events

RUN = "r"
VOLATILE = {"run_id", "latency_ms", "started_at", "finished_at", "duration_s", "wall_time_s"}


def subject(request: TargetRequest) -> str:
    """Right with a per-variant chance, decided by the trial's own seed (the same on every attempt)."""
    quality = float(request.params.get("quality", request.params.get("temperature", 0.5)))
    return "yes" if (request.seed % 1000) / 1000 < quality else "no"


def judge(request: TargetRequest) -> str:
    """A pairwise judge that prefers the response saying yes, wherever it is shown."""
    a, b = (request.prompt.split(f"<response_{x}>")[1].split("</")[0] for x in "ab")
    winner = "tie" if ("yes" in a) == ("yes" in b) else ("A" if "yes" in a else "B")
    return json.dumps({"winner": winner, "reason": "says yes"})


CALLABLES = {"subject": subject, "judge": judge}


def base(**extra: Any) -> dict[str, Any]:
    return {
        "name": "exactly-once", "seed": 4,
        "target": {"kind": "python", "callable": "subject"},
        "variants": [{"name": "a", "params": {"quality": 0.35}}, {"name": "b", "params": {"quality": 0.6}}],
        "cases": [{"id": f"c{i}", "prompt": "p", "expected": "yes"} for i in range(4)],
        "execution": {"concurrency": 2},
        **extra,
    }  # fmt: skip


TUNE = {
    "kind": "tune", "variants": [], "params": {"temperature": 0.2},
    "tune": {"strategy": "grid", "max_experiments": 3, "min_improvement": 0.05,
             "parameters": [{"name": "temperature", "min": 0.2, "max": 0.8, "step": 0.3, "default": 0.2}]},
}  # fmt: skip

STRATEGIES = {
    "pass_at_k_early_exit": base(repeat={"count": 4, "strategy": "pass_at_k", "early_exit": True}),
    "pass_at_k_all_repeats": base(repeat={"count": 3, "strategy": "pass_at_k", "early_exit": False}),
    "mean": base(repeat={"count": 3}),
    "sequential": base(repeat={"count": 4}, stopping={"rule": "sequential", "looks": 2}),
    "tune_remeasure": base(repeat={"count": 2}, **TUNE),
    "pairwise": base(
        repeat={"count": 2},
        graders=[
            {"kind": "exact"},
            {"kind": "pairwise", "name": "side", "judge": {"kind": "python", "callable": "judge"}},
        ],
    ),
    "tune_pass_at_k": base(repeat={"count": 3, "strategy": "pass_at_k", "early_exit": True}, **TUNE),
}


class RecordingStore(MemoryStore):
    """A memory store that keeps every appended blob (a cut copy takes them all: harmless extras)."""

    def events(self) -> list[bytes]:
        return list(self._events)

    def blobs(self) -> list[tuple[str, bytes]]:
        return list(self._blobs.items())


def strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: strip(v) for key, v in value.items() if key not in VOLATILE}
    if isinstance(value, list):
        return [strip(v) for v in value]
    return value


def cut_copy(events: Sequence[bytes], blobs: Iterable[tuple[str, bytes]], cut: int) -> MemoryStore:
    """A store holding the first `cut` events: the log a kill -9 right after event `cut` leaves."""
    store = MemoryStore()
    rows = []
    for data in events[:cut]:
        event = decode(data)
        rows.append((event.run_id, k.tag_of(type(event)), data))
    store.append(rows, list(blobs))
    return store


def outcomes(log: Any) -> tuple[Counter[tuple[Any, ...]], Counter[tuple[Any, ...]], Counter[tuple[Any, ...]]]:
    """How many results (completed or failed) and skips per trial, and decisions (pairwise verdicts,
    sequential looks, tuning variations) per key, the log holds."""
    results: Counter[tuple[Any, ...]] = Counter()
    skips: Counter[tuple[Any, ...]] = Counter()
    decisions: Counter[tuple[Any, ...]] = Counter()
    for e in run_events(log, RUN, None):
        if isinstance(e, k.TrialCompleted | k.TrialFailed):
            results[(e.variant, e.case, e.repeat)] += 1
        elif isinstance(e, k.TrialSkipped):
            skips[(e.variant, e.case, e.repeat)] += 1
        elif isinstance(e, k.PairwiseJudged):
            decisions[(e.grader, e.variant, e.case, e.repeat)] += 1
        elif isinstance(e, k.LookDecided):
            decisions[("look", e.look)] += 1
        elif isinstance(e, k.VariationAccepted | k.VariationRejected):
            decisions[("variation", e.variant)] += 1
    return results, skips, decisions


async def run_clean(definition: dict[str, Any]) -> tuple[RecordingStore, Any]:
    store = RecordingStore()
    async with open_engine(store, callables=CALLABLES) as eng:
        report = await eng.run(spec_from_dict(definition), run_id=RUN)
    return store, strip(json.loads(to_json(report)))


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
async def test_a_run_cut_after_any_event_resumes_to_the_clean_report(strategy: str) -> None:
    clean, expected = await run_clean(STRATEGIES[strategy])
    events, blobs = clean.events(), clean.blobs()
    clean_results, clean_skips, clean_decisions = outcomes(clean)
    assert max(clean_results.values()) == 1 and max(clean_skips.values(), default=1) == 1
    assert max(clean_decisions.values(), default=1) == 1
    last = next(i for i, data in enumerate(events) if isinstance(decode(data), k.RunCompleted))
    regraded = 0
    for cut in range(1, last + 1):
        store = cut_copy(events, blobs, cut)
        prefix = [decode(d) for d in events[:cut]]
        graded = {(e.variant, e.case, e.repeat) for e in prefix if isinstance(e, k.TrialGraded)}
        regraded += any(
            isinstance(e, k.TrialCompleted) and (e.variant, e.case, e.repeat) not in graded for e in prefix
        )
        async with open_engine(store, callables=CALLABLES) as eng:
            report = await eng.run(None, run_id=RUN, resume=True)
        results, skips, decisions = outcomes(store)
        assert results == clean_results and skips == clean_skips, (strategy, cut)
        assert decisions == clean_decisions, (strategy, cut)
        assert not set(results) & set(skips), (strategy, cut, "a trial both skipped and run")
        assert strip(json.loads(to_json(report))) == expected, (strategy, cut)
    kinds = {key[0] for key in clean_decisions}
    decided = {"pairwise": {"side"}, "sequential": {"look"}, "tune_remeasure": {"variation"}}
    assert kinds == decided.get(strategy, {"variation"} if "tune" in strategy else set())
    assert regraded, "no cut left an output waiting for its grade: the regrade path went untested"
