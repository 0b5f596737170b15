"""`engine compare`'s latency and cost gates allow for run-to-run variation: the ratio's interval is
widened by a margin estimated from the experiment's earlier runs (3 or more), else a documented
default, so whole runs shifted by machine load are no regression. The cost floor is per trial."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy.special import stdtrit

from engine.api import open_engine, spec_from_dict
from engine.cli.compare.gate import margin_line
from engine.events.spec import GateSpec
from engine.stats.run_spread import DEFAULT_MARGIN, margin
from engine.store.projections.run_state import RunState
from engine.views.compare.comparison import compare_runs, compare_states
from engine.views.compare.gates import MetricDelta
from tests.gate_runs import simulated_run


def _run(run_id: str, seed: int, latency: float = 1.0, cost: float = 1.0, spread: float = 0.5) -> RunState:
    """8 cases x 50 repeats: latency ~ lognormal around 150 ms (log sd `spread`), cost ~ gamma around
    $0.002, scaled by `latency` and `cost`."""
    rng = np.random.default_rng(seed)

    def trial(variant: str, case: str, repeat: int) -> tuple[float, float, bool]:
        return (float(rng.lognormal(np.log(150), spread)) * latency, float(rng.gamma(4, 0.0005)) * cost,
                bool(rng.random() < 0.7))  # fmt: skip

    return simulated_run(run_id, ["v0"], 8, 50, trial)


def _metric(metrics: list[MetricDelta], name: str) -> MetricDelta:
    return next(m for m in metrics if m.metric == name)


def test_the_margin_follows_the_spread_of_earlier_runs() -> None:
    # p95s 100, 110, 121 ms: log spread log(1.1), pooled with the prior worth 4 degrees of freedom
    # (the spread whose own margin is the default 15%); two runs' log ratio varies sqrt(2) times that
    found = margin("latency", [100.0, 110.0, 121.0], level=0.95)
    prior = math.log1p(0.15) / (float(stdtrit(4, 0.975)) * math.sqrt(2))
    pooled = math.sqrt((4 * prior**2 + 2 * math.log(1.1) ** 2) / 6)
    expected = math.expm1(float(stdtrit(6, 0.975)) * math.sqrt(2) * pooled)
    assert found.runs == 3 and found.value == pytest.approx(expected, abs=1e-6)
    # shrunk: far narrower than the three runs alone (t with 2 degrees of freedom) would make it
    alone = math.expm1(float(stdtrit(2, 0.975)) * math.sqrt(2) * math.log(1.1))
    assert found.value < alone / 2
    # runs that agree exactly: the prior alone is left, shrunk by the runs' degrees of freedom
    assert 0 < margin("latency", [100.0] * 3, 0.95).value < DEFAULT_MARGIN["latency"]
    # many runs outweigh the prior: the margin nears the runs' own (30 runs, t with 33 df)
    many = [100.0, 110.0, 121.0] * 10
    own = math.expm1(float(stdtrit(33, 0.975)) * math.sqrt(2) * float(np.std(np.log(many), ddof=1)))
    assert margin("latency", many, 0.95).value == pytest.approx(own, rel=0.1)
    # fewer than 3 earlier runs: the documented defaults
    assert margin("latency", [100.0, 120.0], 0.95) == (DEFAULT_MARGIN["latency"], 0)
    assert margin("cost", [], 0.95) == (DEFAULT_MARGIN["cost"], 0)


def test_whole_runs_slowed_by_load_are_no_regression() -> None:
    """Each run slowed by its own 0-15% (machine load), nothing else changed, with a steady agent
    (little trial noise) and a tight threshold (2%): without the margin the gate fires on the load,
    with it never (benchmarks/sim_compare.py has the rates over 1000 pairs)."""
    rng = np.random.default_rng(11)
    tight = GateSpec(max_p95_latency_increase=0.02)
    pairs, fired, unguarded = 30, 0, 0
    for i in range(pairs):
        b_load, c_load = rng.uniform(1.0, 1.15, 2)
        base, cand = _run("b", 2 * i, b_load, spread=0.1), _run("c", 2 * i + 1, c_load, spread=0.1)
        result = compare_states(base, cand, tight)
        latency = _metric(result.metrics, "p95_latency_ms")
        assert latency.ratio_ci is not None and latency.run_margin == DEFAULT_MARGIN["latency"]
        fired += latency.regressed
        unguarded += latency.ratio_ci[0] > 1.02  # the same interval without the margin
    assert fired <= pairs * 0.05 and unguarded >= pairs // 6


def test_the_cost_floor_is_per_trial() -> None:
    # 8 cases x 50 repeats at about $0.002 a trial, +80%: about $0.0016 more per trial, $0.64 in all
    base, cand = _run("b", 1), _run("c", 2, cost=1.8)
    above = _metric(compare_states(base, cand, GateSpec(min_cost_increase_usd=0.001)).metrics, "cost_usd")
    assert above.regressed and above.delta_per_trial is not None and 0.001 < above.delta_per_trial < 0.0025
    # a floor of a cent per trial: the rise is real but below it (the total rose by far more than a cent)
    below = _metric(compare_states(base, cand, GateSpec(min_cost_increase_usd=0.01)).metrics, "cost_usd")
    assert below.delta is not None and below.delta > 0.01 and not below.regressed


def subject(request: object) -> str:
    return "the answer"


async def test_compare_reads_the_margin_from_the_experiments_history(tmp_path: Path) -> None:
    spec = spec_from_dict({
        "name": "steady", "target": {"kind": "python", "callable": "subject"},
        "cases": [{"id": f"c{i}", "prompt": "q", "expected": "answer"} for i in range(4)],
        "repeat": {"count": 3},
    })  # fmt: skip
    async with open_engine(tmp_path, callables={"subject": subject}) as eng:
        reports = [await eng.run(spec, run_id=f"r{i}") for i in range(5)]
        early = compare_runs(eng.log, "r0", "r1")  # nothing before r1 but its own baseline
        late = compare_runs(eng.log, "r3", "r4")  # r0, r1, r2 before: three earlier runs
    assert _metric(early.metrics, "p95_latency_ms").run_margin_runs == 0
    latency = _metric(late.metrics, "p95_latency_ms")
    p95s = [r.variants[0].latency_ms.p95 for r in reports[:3]]
    assert latency.run_margin_runs == 3
    assert latency.run_margin == margin("latency", [p for p in p95s if p is not None], 0.95).value
    # `engine compare` says which margins it used and where they came from
    assert "baseline latency 15% (default)" in margin_line(early.metrics)
    assert f"baseline latency {latency.run_margin:.0%} (from 3 earlier runs)" in margin_line(late.metrics)
