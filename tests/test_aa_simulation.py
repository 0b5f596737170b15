"""A/A simulations: variants drawn from the same distribution must rarely produce a significant winner.

Each simulated experiment runs the report's decision path (paired_comparison per candidate, Holm over
the candidates, pick_winner) on 30 cases whose per-case score is a shared case difficulty plus noise
per variant. A power check with a real improvement makes sure the guard is not passing by never firing.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from engine.stats import inference as stats

CASES = 30
NOISE = 0.2


def scores(rng: np.random.Generator, difficulty: np.ndarray, shift: float, kind: str) -> list[float]:
    raw = difficulty + shift + rng.normal(0.0, NOISE, size=len(difficulty))
    if kind == "binary":  # pass/fail: McNemar
        return [1.0 if v > 0.5 else 0.0 for v in raw]
    if kind == "graded":  # a 0..1 grade in quarters: zeros and ties, the tie-corrected Wilcoxon path
        return [float(v) for v in np.clip(np.round(raw * 4) / 4, 0.0, 1.0)]
    return [float(v) for v in raw]  # continuous: exact Wilcoxon


def experiment(
    rng: np.random.Generator, seed: int, shifts: tuple[float, ...], kind: str, resamples: int
) -> tuple[tuple[str | None, bool], list[float | None]]:
    """One experiment as the report decides it: returns (winner, significant) and the raw p-values."""
    difficulty = rng.uniform(0.0, 1.0, size=CASES)
    per_variant = {"base": scores(rng, difficulty, 0.0, kind)}
    for i, shift in enumerate(shifts):
        per_variant[f"cand{i}"] = scores(rng, difficulty, shift, kind)
    base = per_variant["base"]
    results = {
        name: stats.paired_comparison(base, values, seed=seed, resamples=resamples)
        for name, values in per_variant.items()
        if name != "base"
    }
    raw = [r.p_value for r in results.values()]
    adjusted = dict(zip(results, stats.holm(raw), strict=True))
    means = {name: stats.mean(values) for name, values in per_variant.items()}
    deltas = {name: r.delta for name, r in results.items()}
    return stats.pick_winner("base", means, adjusted, deltas), raw


def simulate(count: int, shifts: tuple[float, ...], kind: str, resamples: int = 2000, seed: int = 2024):
    rng = np.random.default_rng(seed)
    outcomes = [experiment(rng, i, shifts, kind, resamples) for i in range(count)]
    significant = sum(1 for (_, sig), _ in outcomes if sig) / count
    raw = [p for _, ps in outcomes for p in ps]
    return significant, sum(1 for p in raw if p is not None and p < 0.05) / len(raw)


def test_aa_continuous_false_winner_rate() -> None:
    # Full 2000 bootstrap resamples here, as the report uses them (the p-value does not depend on them).
    false_winners, raw_rejections = simulate(1000, (0.0,), "continuous")
    assert false_winners <= 0.05
    # Calibrated, not merely conservative: about 5% of raw two-sided p-values fall below 0.05.
    assert 0.03 <= raw_rejections <= 0.07


@pytest.mark.parametrize("kind", ["binary", "graded"])
def test_aa_discrete_false_winner_rate(kind: str) -> None:
    false_winners, raw_rejections = simulate(1000, (0.0,), kind, resamples=200)
    assert false_winners <= 0.05
    assert raw_rejections <= 0.06


def test_aaaa_holm_keeps_the_family_rate() -> None:
    # Three candidates, all equal to the baseline: without Holm the best of three would win too often.
    false_winners, _ = simulate(400, (0.0, 0.0, 0.0), "continuous", resamples=200)
    assert false_winners <= 0.05


# Pass/fail on 30 cases carries less information than a score, so it needs a larger shift for the same power.
@pytest.mark.parametrize(("kind", "shift"), [("continuous", 0.25), ("graded", 0.25), ("binary", 0.4)])
def test_a_real_improvement_is_found(kind: str, shift: float) -> None:
    winners, _ = simulate(200, (shift,), kind, resamples=200)
    assert winners >= 0.9


def test_simulation_is_deterministic() -> None:
    assert simulate(30, (0.0, 0.1), "graded") == simulate(30, (0.0, 0.1), "graded")


def test_the_pass_rate_interval_covers_the_population_rate() -> None:
    # 30 cases of Beta(2, 2) difficulty x 10 repeats: pooled trials (Wilson) covered 0.5 in ~74% of runs
    rng = np.random.default_rng(9)
    covered = 0
    for _ in range(400):
        passes = rng.binomial(10, rng.beta(2, 2, 30))
        lo, hi = stats.cluster_rate_ci95(passes.tolist(), [10] * 30) or (0.0, 1.0)
        covered += lo <= 0.5 <= hi
    assert covered / 400 >= 0.92


def test_same_power_as_a_paired_t_test_on_many_cases() -> None:
    # 50 heterogeneous cases x 3 repeats, +0.1: a rank test that keeps zeros in the ranking loses power
    rng = np.random.default_rng(10)
    ours = reference = 0
    for i in range(300):
        chances = rng.beta(2, 2, 50)
        base, cand = rng.binomial(3, chances), rng.binomial(3, np.clip(chances + 0.1, 0, 1))
        result = stats.paired_comparison([b / 3 for b in base], [c / 3 for c in cand], seed=i, resamples=1)
        ours += result.p_value < 0.05
        reference += scipy.stats.ttest_rel(cand, base).pvalue < 0.05
    assert abs(ours - reference) <= 3  # within 1 point
