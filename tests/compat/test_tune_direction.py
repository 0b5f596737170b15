"""Tuning that reaches the optimum within the source tools' default budgets: an accepted step is
followed onward before the search turns back (grid), and the neighbours in the direction of the last
improvement are tried first (neighbourhood). A Zeph config with no `eval_budget_tokens` gets Zeph's
100k judge-token default, and its session still reaches temperature 0.3."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from engine.actors.targets.target_protocol import TargetRequest, TargetResponse
from engine.actors.tuning import Variation, VariationGenerator
from engine.api import open_engine, spec_from_dict
from engine.events.spec import ParameterRange, TuneSpec
from engine.input.loader import load_experiment
from tests.compat.helpers import run_file
from tests.compat.test_zeph import BENCHMARK, CONFIG_HEAD
from tests.test_tune_search import TEMPERATURE, TOP_P

ZEPH = CONFIG_HEAD  # with Zeph's own defaults: no budget keys
JUDGE_TOKENS = 900  # a rubric, the question and the answer: what a real judge call reads


async def answer(request: TargetRequest) -> TargetResponse:
    """The subject answers at its temperature; the judge scores answers best at 0.3 (1-10 scale)."""
    if request.variant.name == "judge":
        found = re.search(r"temperature (\d\.\d+)", request.prompt)
        temperature = float(found.group(1)) if found else 0.7
        score = max(1, min(10, round(9 - 12 * abs(temperature - 0.3))))
        names = ("accuracy", "completeness", "clarity", "relevance")
        text = '{"scores": {' + ", ".join(f'"{n}": {score}' for n in names) + '}, "reason": "ok"}'
        return TargetResponse(text=text, tokens_in=JUDGE_TOKENS - 60, tokens_out=60)
    temperature = float(request.params.get("temperature", 0.7))
    return TargetResponse(text=f"answered at temperature {temperature:.2f}", tokens_in=40_000)


def _zeph(folder: Path) -> Path:
    (folder / "benchmarks").mkdir(parents=True, exist_ok=True)
    (folder / "benchmarks" / "eval.toml").write_text(BENCHMARK)
    agent = "from tests.compat.test_tune_direction import answer  # noqa: F401\n"
    (folder / "zeph_agent.py").write_text(agent)
    (folder / "config.toml").write_text(ZEPH)
    return folder / "config.toml"


async def test_a_zeph_session_with_the_default_judge_budget_reaches_temperature_0_3(tmp_path: Path) -> None:
    file = _zeph(tmp_path)
    spec = load_experiment(file)
    assert spec.tune is not None and spec.tune.eval_budget_tokens == 100_000  # Zeph's default
    report = await run_file(file)
    tried = [(v.parameter, v.value, v.accepted) for v in report.variations]
    assert tried[:5] == [
        ("temperature", 0.6, True), ("temperature", 0.5, True), ("temperature", 0.4, True),
        ("temperature", 0.3, True), ("temperature", 0.2, False),
    ], tried  # fmt: skip
    assert report.status == "partial"  # the judge budget, not the 20 experiments, ended it


def _generator(strategy: str, *ranges: dict[str, Any]) -> VariationGenerator:
    tune = TuneSpec(strategy=strategy, parameters=[ParameterRange(**r) for r in ranges])  # type: ignore[arg-type]
    return VariationGenerator(tune, seed=3)


def test_the_grid_continues_an_accepted_step_before_turning_back() -> None:
    """From 0.3 up to 0.5 accepted: 0.6 next, though 0.4 is as near and the sweep takes the lower
    first on a tie; then the accepted parameter stays first over another that was never swept."""
    gen = _generator("grid", TOP_P, TEMPERATURE)
    before = {"temperature": 0.3, "top_p": 0.9}
    gen.mark(before)
    for value in [*(round(0.1 + 0.05 * i, 2) for i in range(19))]:  # top_p fully swept first
        if value != 0.9:
            gen.mark(before, Variation("top_p", value))
    gen.accepted(before, Variation("temperature", 0.5))
    best = {"temperature": 0.5, "top_p": 0.9}
    gen.mark(best)
    assert [gen.next(best) for _ in range(3)] == [
        Variation("temperature", 0.6), Variation("temperature", 0.7), Variation("temperature", 0.8),
    ]  # fmt: skip


def test_a_neighbourhood_tries_onward_from_the_last_improvement_first() -> None:
    gen = _generator("neighborhood", TEMPERATURE, TOP_P)
    before = {"temperature": 0.4, "top_p": 0.9}
    gen.mark(before)
    gen.accepted(before, Variation("top_p", 0.85))
    best = {"temperature": 0.4, "top_p": 0.85}
    gen.mark(best)
    assert gen.next(best) == Variation("top_p", 0.8)


def peaked_2d(request: TargetRequest) -> str:
    """Right with a chance that peaks at temperature 0.3, top_p 0.8 (the trial's seed decides)."""
    temperature = float(request.params.get("temperature", 0.7))
    top_p = float(request.params.get("top_p", 0.9))
    chance = max(0.0, 1.0 - 1.5 * abs(temperature - 0.3) - 3.0 * abs(top_p - 0.8))
    return "yes" if (request.seed % 1000) / 1000 < chance else "no"


@pytest.mark.parametrize("seed", range(4))
async def test_a_neighbourhood_search_from_0_4_0_9_reaches_0_3_0_8_within_8_tries(
    tmp_path: Path, seed: int
) -> None:
    spec = spec_from_dict({
        "name": "search", "kind": "tune", "seed": seed,
        "target": {"kind": "python", "callable": "peaked"},
        "params": {"temperature": 0.4, "top_p": 0.9},
        "cases": [{"id": f"c{i}", "prompt": "p", "expected": "yes"} for i in range(40)],
        "repeat": {"count": 2},
        "tune": {"strategy": "neighborhood", "max_experiments": 8, "min_improvement": 0.05,
                 "parameters": [TEMPERATURE, TOP_P]},
    })  # fmt: skip
    async with open_engine(tmp_path, callables={"peaked": peaked_2d}) as eng:
        report = await eng.run(spec)
    best = {"temperature": 0.4, "top_p": 0.9}
    for v in report.variations:
        if v.accepted:
            best[v.parameter] = float(v.value)  # type: ignore[arg-type]
    assert best == {"temperature": 0.3, "top_p": 0.8}, [(v.parameter, v.value, v.accepted)
                                                        for v in report.variations]  # fmt: skip
