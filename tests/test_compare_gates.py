"""`engine compare`'s latency and cost gates: a bootstrap interval of the ratio, not a bare +20%."""

from __future__ import annotations

import msgspec
import numpy as np

from engine.events.spec import GateSpec
from engine.store.projections.run_state import RunState
from engine.views.compare.comparison import compare_states
from engine.views.compare.gates import MetricDelta
from tests.gate_runs import simulated_run


def _run(run_id: str, seed: int, shift: float = 1.0, repeats: int = 5, variants: int = 1) -> RunState:
    """Latencies ~ lognormal around 150 ms, costs ~ gamma around $0.002, both scaled by `shift`."""
    rng = np.random.default_rng(seed)

    def trial(variant: str, case: str, repeat: int) -> tuple[float, float, bool]:
        latency, cost = rng.lognormal(np.log(150), 0.5), rng.gamma(4, 0.0005)
        return float(latency) * shift, float(cost) * shift, bool(rng.random() < 0.7)

    return simulated_run(run_id, [f"v{i}" for i in range(variants)], 8, repeats, trial)


def _metric(metrics: list[MetricDelta], name: str) -> MetricDelta:
    return next(m for m in metrics if m.metric == name)


def test_an_aa_pair_the_bare_20_percent_rule_flagged_is_not_a_regression() -> None:
    # same distribution, different draws: the candidate's p95 came out 49% higher by chance
    result = compare_states(_run("base", 100), _run("cand", 108))
    latency = _metric(result.metrics, "p95_latency_ms")
    assert latency.baseline is not None and latency.candidate is not None and latency.delta is not None
    old_rule_fired = latency.candidate > latency.baseline * 1.2 and latency.delta > 10
    assert old_rule_fired
    assert latency.ratio_ci is not None
    assert latency.ratio_ci[0] <= latency.candidate / latency.baseline <= latency.ratio_ci[1]
    assert latency.ratio_ci[0] < 1.2 and not latency.regressed and not result.regressed


def test_a_real_80_percent_rise_in_latency_and_cost_still_fires() -> None:
    # without history the interval is widened by the default run-to-run margins (15% and 5%)
    result = compare_states(_run("base", 100, repeats=100), _run("cand", 101, shift=1.8, repeats=100))
    for name in ("p95_latency_ms", "cost_usd"):
        metric = _metric(result.metrics, name)
        assert metric.ratio_ci is not None and metric.run_margin is not None and metric.run_margin_runs == 0
        assert metric.ratio_ci[0] / (1 + metric.run_margin) > 1.2, metric
        assert metric.regressed, metric
    assert result.regressed


def test_the_absolute_floor_still_applies() -> None:
    tiny = GateSpec(min_latency_increase_ms=10_000.0, min_cost_increase_usd=1_000.0)
    result = compare_states(_run("base", 100, repeats=100), _run("cand", 101, shift=1.6, repeats=100), tiny)
    assert _metric(result.metrics, "p95_latency_ms").ratio_ci[0] > 1.2  # type: ignore[index]
    assert not result.regressed


def test_three_variants_holm_adjust_the_paired_tests() -> None:
    result = compare_states(_run("base", 5, variants=3), _run("cand", 6, variants=3))
    assert len([m for m in result.metrics if m.metric == "p95_latency_ms"]) == 3
    for m in result.metrics:
        if m.metric in ("pass_rate", "mean_score") and m.p_value is not None:
            assert m.p_value_adjusted is not None and m.p_value_adjusted >= m.p_value


def test_a_comparison_is_the_same_bytes_every_time() -> None:
    first = msgspec.json.encode(compare_states(_run("base", 1), _run("cand", 2)))
    again = msgspec.json.encode(compare_states(_run("base", 1), _run("cand", 2)))
    assert first == again and b'"ratio_ci":[' in first


def _old_rule_fires(m: MetricDelta) -> bool:
    """The bare rule this gate replaced: +20% and above the absolute floor (10 ms, $0.001)."""
    floor = 10.0 if m.metric == "p95_latency_ms" else 0.001
    assert m.baseline is not None and m.candidate is not None and m.delta is not None
    return m.candidate > m.baseline * 1.2 and m.delta > floor


def test_aa_comparisons_of_three_variants_rarely_flag_latency_cost_or_a_case() -> None:
    # the bare +20% rule flagged a third of such pairs (see benchmarks/sim_gates.py for 1000 pairs)
    pairs, old_flags, new_flags = 60, 0, 0
    for i in range(pairs):
        result = compare_states(
            _run("base", 1000 + 2 * i, variants=3), _run("cand", 1001 + 2 * i, variants=3)
        )
        gated = [m for m in result.metrics if m.metric in ("p95_latency_ms", "cost_usd")]
        old_flags += any(_old_rule_fires(m) for m in gated)
        new_flags += any(m.regressed for m in gated) or bool(result.newly_failing)
    assert old_flags >= pairs // 5  # the old rule's false alarms are there to be removed
    assert new_flags <= pairs * 0.05


def test_the_gates_alpha_sets_the_ratio_intervals_level() -> None:
    base, cand = _run("base", 3, repeats=20), _run("cand", 4, repeats=20)
    at_5 = _metric(compare_states(base, cand, GateSpec(alpha=0.05)).metrics, "p95_latency_ms").ratio_ci
    at_1 = _metric(compare_states(base, cand, GateSpec(alpha=0.01)).metrics, "p95_latency_ms").ratio_ci
    assert at_5 is not None and at_1 is not None
    assert at_1[0] < at_5[0] and at_5[1] < at_1[1]  # a stricter alpha, a wider interval
