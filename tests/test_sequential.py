"""Sequential runs ([stopping] rule = "sequential"): repeats in rounds, a look after each, stop when clear."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.actors.targets.target_protocol import TargetRequest
from engine.api import open_engine, spec_from_dict
from engine.errors import InputError
from engine.events import kinds as k
from engine.stats.sequential_looks import look_decision, look_level
from engine.store.projection import run_events


def subject(request: TargetRequest) -> str:
    """Right with probability `quality`, decided by the trial's own seed (deterministic per trial)."""
    quality = float(request.params.get("quality", 0.5))
    return "yes" if (request.seed % 1000) / 1000 < quality else "no"


def experiment(weak: float, strong: float, **stopping: Any) -> Any:
    return spec_from_dict({
        "name": "sequential", "seed": 3,
        "target": {"kind": "python", "callable": "subject"},
        "variants": [
            {"name": "base", "params": {"quality": weak}}, {"name": "cand", "params": {"quality": strong}},
        ],
        "cases": [{"id": f"c{i}", "prompt": "p", "expected": "yes"} for i in range(40)],
        "repeat": {"count": 8},
        "stopping": {"rule": "sequential", "looks": 4, **stopping},
    })  # fmt: skip


def looks(log: Any, run_id: str) -> list[k.LookDecided]:
    return [e for e in run_events(log, run_id, {"look.decided"}) if isinstance(e, k.LookDecided)]


async def test_a_clear_difference_stops_early_and_says_what_it_saved(tmp_path: Path) -> None:
    async with open_engine(tmp_path, callables={"subject": subject}) as eng:
        report = await eng.run(experiment(0.4, 0.95))
        decided = looks(eng.log, report.run_id)
    stopping = report.stopping
    assert stopping is not None and stopping.stopped == "efficacy" and stopping.looks_done < 4
    assert [e.look for e in decided] == list(range(1, stopping.looks_done + 1))
    assert report.trials_done == 2 * 40 * decided[-1].repeats
    assert stopping.trials_saved == 2 * 40 * 8 - report.trials_done > 0
    assert not report.is_partial and report.status == "completed"
    assert report.winner == "cand" and report.winner_significant
    assert stopping.level == pytest.approx(look_level(0.05, stopping.looks_done, 4), abs=1e-6)


async def test_no_difference_stops_for_futility_or_runs_out_without_a_winner(tmp_path: Path) -> None:
    async with open_engine(tmp_path, callables={"subject": subject}) as eng:
        report = await eng.run(experiment(0.6, 0.6))
    assert report.stopping is not None and report.stopping.stopped in ("futility", "max")
    assert not report.winner_significant


async def test_a_resumed_sequential_run_decides_no_look_twice(tmp_path: Path) -> None:
    async with open_engine(tmp_path, callables={"subject": subject}) as eng:
        handle = eng.start(experiment(0.55, 0.7), events=True)
        async for event in handle.events():
            if isinstance(event, k.LookDecided):
                handle.cancel("restart")
        stopped = await handle.result()
        assert stopped.status == "cancelled"
        resumed = await eng.run(None, run_id=stopped.run_id, resume=True)
        decided = looks(eng.log, resumed.run_id)
    assert [e.look for e in decided] == list(range(1, len(decided) + 1))
    assert resumed.stopping is not None and resumed.stopping.looks_done == len(decided)


def test_the_decision_rule() -> None:
    level = look_level(0.05, 1, 4)
    assert look_decision([(0.001, 0.3)], level, 1, 4) == "efficacy"
    assert look_decision([(0.2, 0.1)], level, 1, 4) == ""
    assert look_decision([(0.2, -0.1)], level, 1, 4) == ""  # futility only from half the looks on
    assert look_decision([(0.2, -0.1)], look_level(0.05, 2, 4), 2, 4) == "futility"
    assert look_decision([(0.001, 0.3), (0.3, 0.05)], level, 1, 4) == ""  # one candidate still open
    assert look_decision([(0.2, 0.1)], 0.05, 4, 4) == "max"


def test_sequential_needs_a_round_of_repeats_per_look() -> None:
    with pytest.raises(InputError, match="stopping.looks"):
        experiment(0.5, 0.6, looks=9)
