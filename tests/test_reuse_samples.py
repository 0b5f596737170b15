"""A reused trial is one sample like a sent one: budgets count only what the run sends, and a
sequential run or a race decides the same on reused trials as on the trials it reuses."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from engine.actors.targets.target_protocol import TargetRequest
from engine.api import open_engine, spec_from_dict
from engine.events.codec import to_json
from engine.store.memory import MemoryStore
from tests.test_resume_exactly_once import base, strip

CALLS: Counter[str] = Counter()


def subject(request: TargetRequest) -> str:
    CALLS[request.variant.name] += 1
    quality = float(request.params.get("quality", 0.5))
    return "yes" if (request.seed % 1000) / 1000 < quality else "no"


async def run(store: MemoryStore, definition: dict[str, Any], run_id: str) -> dict[str, Any]:
    async with open_engine(store, callables={"subject": subject}) as eng:
        report = await eng.run(spec_from_dict(definition), run_id=run_id)
    return json.loads(to_json(report))  # type: ignore[no-any-return]


def without_reuse(report: dict[str, Any]) -> Any:
    return strip({**report, "variants": [{**v, "reuse": None} for v in report["variants"]]})


async def test_budgets_count_only_the_trials_sent() -> None:
    store = MemoryStore()
    await run(store, base(repeat={"count": 2}), "full")  # variants a and b, 4 cases x 2 repeats
    CALLS.clear()
    more = base(repeat={"count": 2}, reuse={}, budget={"max_trials": 8})
    more["variants"].append({"name": "c", "params": {"quality": 0.9}})
    report = await run(store, more, "one-more")
    assert CALLS == {"c": 8} and report["status"] == "completed" and not report["budget_exhausted"]
    assert [v["reuse"]["trials"] if "reuse" in v else 0 for v in report["variants"]] == [8, 8, 0]


async def test_a_sequential_run_and_a_race_decide_the_same_on_reused_trials() -> None:
    for stopping in ({"rule": "sequential", "looks": 2}, {"rule": "race", "rounds": 2}):
        store = MemoryStore()
        definition = base(repeat={"count": 4}, stopping=stopping)
        first = await run(store, definition, "first")
        CALLS.clear()
        again = await run(store, {**definition, "reuse": {}}, "again")
        assert not CALLS, (stopping, "a trial the first run made was sent again")
        assert without_reuse(again) == without_reuse(first), stopping
        assert again["stopping"] == first["stopping"]


async def test_a_tuning_session_re_measures_by_default_and_reuses_within_max_age() -> None:
    from tests.test_resume_exactly_once import TUNE

    store = MemoryStore()
    session = base(repeat={"count": 2}, **TUNE)
    CALLS.clear()
    first = await run(store, session, "night-1")
    sent = sum(CALLS.values())
    CALLS.clear()
    await run(store, session, "night-2")
    assert sum(CALLS.values()) == sent, "the default must re-measure everything"
    CALLS.clear()
    reusing = await run(store, {**session, "reuse": {"max_age": "20h"}}, "night-3")
    assert sum(CALLS.values()) == 0  # the same requests, made within max_age: all reused
    assert [v["variant"] for v in reusing["variations"]] == [v["variant"] for v in first["variations"]]
