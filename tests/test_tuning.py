"""Tuning sessions with a deterministic subject whose quality peaks at temperature 0.3."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.actors.search_space import neighbours
from engine.actors.targets.target_protocol import TargetRequest
from engine.actors.tuning import VariationGenerator, defaults, grid_points, quantize
from engine.api import open_engine, spec_from_dict
from engine.events import kinds as k
from engine.events.spec import ParameterRange, TuneSpec
from engine.stats.sequential_looks import look_level
from engine.store.projection import run_events


def peaked(request: TargetRequest) -> str:
    """Right with probability 1 - 1.5 * |temperature - 0.3|, decided by the trial's own seed."""
    temperature = float(request.params.get("temperature", 0.7))
    chance = max(0.0, 1.0 - 1.5 * abs(temperature - 0.3))
    return "yes" if (request.seed % 1000) / 1000 < chance else "no"


def tune_spec(strategy: str = "grid", max_experiments: int = 20, **tune: Any) -> Any:
    return spec_from_dict(
        {
            "name": "tune-temperature",
            "kind": "tune",
            "seed": 11,
            "target": {"kind": "python", "callable": "peaked"},
            "params": {"temperature": 0.7},
            "cases": [{"id": f"c{i}", "prompt": "p", "expected": "yes"} for i in range(40)],
            "repeat": {"count": 2},
            "tune": {
                "strategy": strategy,
                "max_experiments": max_experiments,
                "min_improvement": 0.05,
                "parameters": [{"name": "temperature", "min": 0.0, "max": 1.0, "step": 0.1, "default": 0.7}],
                **tune,
            },
        }
    )


def variations(log: Any, run_id: str) -> list[k.VariationAccepted | k.VariationRejected]:
    tags = {"variation.accepted", "variation.rejected"}
    return [
        e for e in run_events(log, run_id, tags) if isinstance(e, k.VariationAccepted | k.VariationRejected)
    ]


def best_temperature(decided: list[Any]) -> float:
    accepted = [d for d in decided if isinstance(d, k.VariationAccepted)]
    return float(accepted[-1].value) if accepted else 0.7


def test_quantize_and_grid_points() -> None:
    p = ParameterRange(name="t", min=0.0, max=1.0, default=0.7, step=0.1)
    assert quantize(p, 0.34) == 0.3 and quantize(p, 7) == 1.0 and quantize(p, -1) == 0.0
    assert grid_points(p) == [round(0.1 * i, 10) for i in range(11)]


def test_an_integer_parameter_keeps_its_default_and_whole_steps() -> None:
    """top_k 1-100, step 5, default 40: the grid is anchored at the default, so 40 stays 40."""
    top_k = ParameterRange(name="top_k", min=1, max=100, default=40, step=5, integer=True)
    assert defaults(TuneSpec(parameters=[top_k])) == {"top_k": 40.0}
    assert quantize(top_k, 40) == 40.0 and quantize(top_k, 42) == 40.0 and quantize(top_k, 43) == 45.0
    assert quantize(top_k, 2) == 1.0 and quantize(top_k, 250) == 100.0  # min and max are grid points
    assert grid_points(top_k) == [1.0, *(5.0 * i for i in range(1, 21))]
    assert neighbours(top_k, 40.0, 1.0) == [35.0, 45.0] and neighbours(top_k, 5.0, 1.0) == [1.0, 10.0]
    # a fractional step on an integer parameter becomes a whole one (never a 2.5 between values)
    odd = ParameterRange(name="n", min=0, max=20, default=7, step=2.4, integer=True)
    assert all(float(v).is_integer() for v in grid_points(odd)) and neighbours(odd, 7.0, 1.0) == [5.0, 9.0]


async def test_top_k_and_max_tokens_reach_the_subject_as_whole_numbers(tmp_path: Path) -> None:
    """Servers refuse `max_tokens: 35.0`: parameters they take as integers are tried at whole numbers
    even when the file does not say `integer = true`."""
    seen: list[dict[str, Any]] = []

    def subject(request: TargetRequest) -> str:
        seen.append(dict(request.params))
        return "yes"

    spec = tune_spec(
        max_experiments=3,
        parameters=[
            {"name": "top_k", "min": 1, "max": 100, "step": 5, "default": 40},
            {"name": "max_tokens", "min": 16, "max": 64, "step": 8, "default": 32},
        ],
    )
    async with open_engine(tmp_path, callables={"peaked": subject}) as eng:
        report = await eng.run(spec)
    tried = [v.value for v in report.variations]
    assert tried and all(isinstance(v, int) for v in tried), tried
    sent = {(name, type(value)) for params in seen for name, value in params.items() if name != "temperature"}
    assert sent == {("top_k", int), ("max_tokens", int)}, sent


def test_random_strategy_is_seeded_and_never_repeats() -> None:
    spec = TuneSpec(
        strategy="random", parameters=[ParameterRange(name="t", min=0, max=1, default=0.5, step=0.1)]
    )
    gen_a, gen_b = VariationGenerator(spec, seed=3), VariationGenerator(spec, seed=3)
    seq_a = [gen_a.next({"t": 0.5}) for _ in range(11)]
    seq_b = [gen_b.next({"t": 0.5}) for _ in range(11)]
    assert seq_a == seq_b
    # 11 grid points less the current value: 10 distinct proposals, then the space is exhausted
    assert len(set(seq_a[:10])) == 10 and None not in seq_a[:10] and seq_a[10] is None


async def test_grid_finds_the_optimum(tmp_path: Path) -> None:
    async with open_engine(tmp_path, callables={"peaked": peaked}) as eng:
        report = await eng.run(tune_spec("grid"))
        decided = variations(eng.log, report.run_id)
    assert report.status == "completed"
    assert best_temperature(decided) == pytest.approx(0.3)
    assert len(decided) == 10  # 11 grid points less the starting value
    assert len(report.variations) == 10 and any(v.accepted for v in report.variations)
    # each decision after an acceptance compares with the accepted variant measured afresh
    for before, after in zip(decided, decided[1:], strict=False):
        if isinstance(before, k.VariationAccepted):
            assert after.baseline == before.variant + "+re"
            fresh = next(v for v in report.variants if v.name == after.baseline)
            assert fresh.trials >= 40 * 2 and fresh.params == {"temperature": before.value}


def test_repeated_looks_spend_alpha_and_never_more() -> None:
    for looks in (1, 2, 3, 5):
        levels = [look_level(0.05, look, looks) for look in range(1, looks + 1)]
        assert sum(levels) == pytest.approx(0.05) and levels == sorted(levels)  # most at the last look
    assert look_level(0.05, 1, 1) == 0.05


def test_neighborhood_retries_a_rejected_neighbour_once_the_rest_are_tried() -> None:
    p = ParameterRange(name="t", min=0, max=1, default=0.5, step=0.1)
    gen = VariationGenerator(TuneSpec(strategy="neighborhood", parameters=[p], radius=1.0), seed=2)
    gen.mark({"t": 0.5})
    first = [gen.next({"t": 0.5}) for _ in range(2)]
    assert sorted(v.value for v in first) == [0.4, 0.6]  # both neighbours, once each
    second = [gen.next({"t": 0.5}) for _ in range(3)]
    assert sorted(v.value for v in second[:2]) == [0.4, 0.6] and second[2] is None  # then once more


async def test_random_with_the_same_seed_replays_the_same_sequence(tmp_path: Path) -> None:
    async with open_engine(tmp_path, callables={"peaked": peaked}) as eng:
        first = await eng.run(tune_spec("random", max_experiments=6))
        second = await eng.run(tune_spec("random", max_experiments=6))
        seq = [
            [(d.parameter, d.value, type(d)) for d in variations(eng.log, r.run_id)] for r in (first, second)
        ]
    assert seq[0] == seq[1] and len(seq[0]) == 6


async def test_restart_mid_session_continues_without_retesting(tmp_path: Path) -> None:
    async with open_engine(tmp_path, callables={"peaked": peaked}) as eng:
        reference = await eng.run(tune_spec("grid"))
        expected = [(d.parameter, d.value, type(d)) for d in variations(eng.log, reference.run_id)]
        handle = eng.start(tune_spec("grid"), events=True)
        async for event in handle.events():
            if isinstance(event, k.VariationAccepted | k.VariationRejected):
                handle.cancel("restart")
        stopped = await handle.result()
        assert stopped.status == "cancelled"
        resumed = await eng.run(None, run_id=stopped.run_id, resume=True)
        got = [(d.parameter, d.value, type(d)) for d in variations(eng.log, resumed.run_id)]
    assert resumed.status == "completed"
    assert got == expected  # same decisions, none repeated
