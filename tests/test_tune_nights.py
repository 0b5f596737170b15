"""Scheduled tuning over several nights, on trio's virtual clock: each night continues the search."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
import trio

from engine.actors.targets.target_protocol import TargetRequest
from engine.api import open_engine, spec_from_dict
from engine.events.report import RunReport
from engine.runtime.run_status import list_runs
from engine.runtime.schedule import ScheduleControl, from_current_best, run_on_schedule
from engine.store.memory import MemoryStore

EPOCH = 1_800_000_000.0  # a fixed wall-clock origin for the virtual clock
GRID = [round(0.1 * i, 1) for i in range(11)]


def peaked_at(optimum: float) -> Callable[[TargetRequest], Awaitable[str]]:
    """Right with probability 1 - 1.5 * |temperature - optimum|, decided by the trial's own seed
    (async: nothing waits on a thread, so the virtual clock only moves when the engine idles)."""

    async def answer(request: TargetRequest) -> str:
        temperature = float(request.params.get("temperature", 0.7))
        chance = max(0.0, 1.0 - 1.5 * abs(temperature - optimum))
        return "yes" if (request.seed % 1000) / 1000 < chance else "no"

    return answer


def nightly(strategy: str = "grid", per_night: int = 2, **tune: Any) -> Any:
    return spec_from_dict(
        {
            "name": "nightly-tuning",
            "kind": "tune",
            "seed": 11,
            "target": {"kind": "python", "callable": "peaked"},
            "params": {"temperature": 0.7},
            "cases": [{"id": f"c{i}", "prompt": "p", "expected": "yes"} for i in range(40)],
            "repeat": {"count": 2},
            "schedule": {"cron": "0 3 * * *", "max_experiments_per_run": per_night},
            "tune": {
                "strategy": strategy,
                "max_experiments": 20,
                "min_improvement": 0.05,
                "parameters": [{"name": "temperature", "min": 0.0, "max": 1.0, "step": 0.1, "default": 0.7}],
                **tune,
            },
        }
    )


async def nights(spec: Any, optimum: float, count: int) -> tuple[list[RunReport], float]:
    """Run `count` nightly sessions; the reports oldest first and where the next night would start."""
    control, lines = ScheduleControl(), []

    def log(line: str) -> None:
        lines.append(line)
        if sum(line.startswith("session ") for line in lines) == count:
            control.stop("enough nights")

    async with open_engine(MemoryStore(), callables={"peaked": peaked_at(optimum)}, cancel_poll_s=30) as eng:
        wall = lambda: EPOCH + trio.current_time()  # noqa: E731
        await run_on_schedule(eng, spec, "0 3 * * *", control, log=log, wall=wall)
        runs = list_runs(eng.log)
        reports = [eng.replay(r.run_id) for r in sorted(runs, key=lambda r: r.started_ts)]
        start = from_current_best(spec, eng.log).params["temperature"]
    assert len(reports) == count and all(r.origin == "scheduled" for r in runs)
    return reports, float(start)


def end_of(report: RunReport) -> float:
    accepted = [v for v in report.variations if v.accepted]
    return float(accepted[-1].value if accepted else report.variants[0].params["temperature"])  # type: ignore[arg-type]


@pytest.mark.parametrize("optimum", [0.3, 0.9, 0.0])
async def test_nightly_grid_reaches_the_optimum(optimum: float, autojump_clock: trio.abc.Clock) -> None:
    """Two decisions a night over 11 grid points: five nights cover the grid, and the single peak is
    reached however far it lies from the default (0.7), with no configuration tested twice."""
    reports, start = await nights(nightly(), optimum, count=5)
    assert start == pytest.approx(optimum)
    assert [len(r.variations) for r in reports] == [2] * 5  # every night used its budget
    for before, after in zip(reports, reports[1:], strict=False):
        assert after.variants[0].params["temperature"] == pytest.approx(end_of(before))  # continues
    tested = [float(v.value) for r in reports for v in r.variations]  # type: ignore[arg-type]
    assert sorted(tested) == [t for t in GRID if t != 0.7]  # new points each night, never a repeat


async def test_the_first_nights_head_for_the_peak(autojump_clock: trio.abc.Clock) -> None:
    """From 0.7 the grid sweeps outward from each night's best: the peak at 0.3 (four steps away,
    beyond the first grid points of a sweep from 0.7) is the best after two nights of two tries."""
    reports, start = await nights(nightly(), 0.3, count=2)
    assert [float(v.value) for v in reports[0].variations] == [0.6, 0.5]  # type: ignore[arg-type]
    assert start == pytest.approx(0.3)


async def test_nightly_neighbourhood_sessions_reach_the_optimum(autojump_clock: trio.abc.Clock) -> None:
    reports, start = await nights(nightly("neighborhood", per_night=3), 0.3, count=3)
    assert start == pytest.approx(0.3)
    for before, after in zip(reports, reports[1:], strict=False):
        assert after.variants[0].params["temperature"] == pytest.approx(end_of(before))
