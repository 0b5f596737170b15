"""Tuning sessions that race their candidates ([stopping] rule = "race" with kind = "tune"): a
candidate clearly worse than the best is dropped after a round of cases, with a variant.eliminated
event and its rejection; the accept rule alone accepts; a resumed session decides the same."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio

from engine.actors.targets.target_protocol import TargetRequest
from engine.api import open_engine, spec_from_dict
from engine.errors import InputError
from engine.events import kinds as k
from engine.presentation.report.tables import variation_rows
from engine.stats.racing import race_threshold
from engine.store.projection import run_events


async def peaked(request: TargetRequest) -> str:
    """Right with probability 1 - 1.5 * |temperature - 0.3|, decided by the trial's own seed (async:
    no trial waits on a thread, so the virtual clock moves only when the engine idles)."""
    temperature = float(request.params.get("temperature", 0.7))
    chance = max(0.0, 1.0 - 1.5 * abs(temperature - 0.3))
    return "yes" if (request.seed % 1000) / 1000 < chance else "no"


def tune_spec(race: bool = True, strategy: str = "grid", **stopping: Any) -> Any:
    raw = tune_raw(race, **stopping)
    return spec_from_dict({**raw, "tune": {**raw["tune"], "strategy": strategy}})


def tune_raw(race: bool = True, **stopping: Any) -> dict[str, Any]:
    return {
        "name": "tune-race", "kind": "tune", "seed": 11,
        "target": {"kind": "python", "callable": "peaked"},
        "params": {"temperature": 0.7},
        "cases": [{"id": f"c{i}", "prompt": "p", "expected": "yes"} for i in range(40)],
        "repeat": {"count": 2},
        "tune": {
            "strategy": "grid", "max_experiments": 20, "min_improvement": 0.05,
            "parameters": [{"name": "temperature", "min": 0.0, "max": 1.0, "step": 0.1, "default": 0.7}],
        },
        **({"stopping": {"rule": "race", "rounds": 4, **stopping}} if race else {}),
    }  # fmt: skip


def logged(log: Any, run_id: str) -> list[Any]:
    tags = {"variant.eliminated", "variation.accepted", "variation.rejected"}
    return [msgspec.structs.replace(e, ts=0.0) for e in run_events(log, run_id, tags)]


def decisions(events: list[Any]) -> list[Any]:
    return [e for e in events if isinstance(e, k.VariationAccepted | k.VariationRejected)]


@pytest.mark.parametrize("strategy", ["grid", "random"])
async def test_clearly_worse_candidates_are_dropped_early_and_the_optimum_is_found(
    tmp_path: Path, strategy: str, autojump_clock: trio.abc.Clock
) -> None:
    async with open_engine(tmp_path, callables={"peaked": peaked}) as eng:
        raced = await eng.run(tune_spec(strategy=strategy), run_id="raced")
        full = await eng.run(tune_spec(race=False, strategy=strategy), run_id="full")
        events = logged(eng.log, "raced")
        unraced = decisions(logged(eng.log, "full"))
    # the differences here are wide: the race changes no decision, only what the rejections cost
    assert [(d.value, type(d)) for d in decisions(events)] == [(d.value, type(d)) for d in unraced]
    dropped = [e for e in events if isinstance(e, k.VariantEliminated)]
    assert dropped, "the far temperatures should lose to the best within a round or two"
    threshold = race_threshold(0.05, 4, 2)
    by_name = {d.variant: d for d in decisions(events)}
    for drop in dropped:
        assert drop.round < 4 and drop.p_value < drop.threshold == pytest.approx(threshold)
        # each drop is followed by its rejection, against the best it lost to, saying why
        rejection = by_name[drop.variant]
        assert isinstance(rejection, k.VariationRejected) and rejection.baseline == drop.lost_to
        assert rejection.reason.startswith(f"dropped by the race in round {drop.round} of 4")
        assert rejection.delta < 0 and events.index(rejection) == events.index(drop) + 1
        trials = next(v.trials for v in raced.variants if v.name == drop.variant)
        assert trials == drop.cases * 2 < 40 * 2  # it ran only the rounds it was in
    # the race only rejects: every acceptance passed the session's own rule over every case
    for accepted in (d for d in decisions(events) if isinstance(d, k.VariationAccepted)):
        assert accepted.variant not in {d.variant for d in dropped} and accepted.delta >= 0.05
        assert next(v.trials for v in raced.variants if v.name == accepted.variant) >= 40 * 2
    best = [d for d in decisions(events) if isinstance(d, k.VariationAccepted)][-1]
    assert float(best.value) == pytest.approx(0.3)
    assert raced.status == "completed" and raced.trials_done < full.trials_done
    assert raced.stopping is None  # the decisions tell the race: no section of a race of variants
    # the report and its tables say which candidates the race dropped, and after which round
    rounds = {d.variant: d.round for d in dropped}
    assert {r.variant: r.dropped_round for r in raced.variations if r.dropped_round} == rounds
    rows = variation_rows(raced)
    assert {row[0]: row[-1] for row in rows if row[-1].startswith("dropped")} == {
        v: f"dropped in round {n}" for v, n in rounds.items()
    }


async def test_a_session_cut_in_the_middle_of_a_race_resumes_to_the_same_decisions(
    tmp_path: Path, autojump_clock: trio.abc.Clock
) -> None:
    async with open_engine(tmp_path / "whole", callables={"peaked": peaked}) as eng:
        whole = await eng.run(tune_spec(), run_id="t")
        expected = logged(eng.log, "t")
    first_drop = next(e for e in expected if isinstance(e, k.VariantEliminated))
    async with open_engine(tmp_path / "cut", callables={"peaked": peaked}) as eng:
        handle = eng.start(tune_spec(), run_id="t", events=True)
        async for event in handle.events():
            # the trials of the candidate the race will drop: cut while its rounds are running
            if isinstance(event, k.TrialCompleted) and event.variant == first_drop.variant:
                handle.cancel("restart in the middle of a race")
        assert (await handle.result()).status == "cancelled"
        cut = logged(eng.log, "t")
        assert first_drop not in cut and len(decisions(cut)) < len(decisions(expected))  # cut mid-race
        resumed = await eng.run(None, run_id="t", resume=True)
        got = logged(eng.log, "t")
    assert [strip(e) for e in got] == [strip(e) for e in expected]
    assert resumed.status == "completed" and resumed.trials_done == whole.trials_done


def strip(event: Any) -> Any:
    """A decision as logged, less what a restart may change (the latency of its trials)."""
    if isinstance(event, k.VariationAccepted | k.VariationRejected):
        return msgspec.structs.replace(event, latency_ms=0.0)
    return event


@pytest.mark.parametrize(
    ("stopping", "field"),
    [
        ({"rule": "sequential"}, "stopping.rule"),
        ({"rule": "race", "objective": "cost_per_pass"}, "stopping.objective"),
        ({"rule": "race", "min_improvement": 0.1}, "stopping.min_improvement"),
    ],
)
def test_a_tuning_race_takes_the_session_own_measure_and_margin(stopping: dict[str, Any], field: str) -> None:
    with pytest.raises(InputError) as refused:
        spec_from_dict({**tune_raw(), "stopping": stopping})
    assert refused.value.field == field and "tuning session" in refused.value.expected
