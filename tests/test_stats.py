"""Statistics against known values and scipy, plus properties; the A/A false-winner rate."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats as sp

from store import stats


def test_mean_and_t_interval_match_scipy() -> None:
    values = [0.2, 0.4, 0.9, 0.5, 0.7]
    lo, hi = stats.mean_ci95(values) or (0, 0)
    expected = sp.t.interval(0.95, len(values) - 1, loc=np.mean(values), scale=sp.sem(values))
    assert stats.mean(values) == pytest.approx(0.54)
    assert (lo, hi) == pytest.approx(expected)
    assert stats.mean_ci95([0.3]) == (0.3, 0.3) and stats.mean_ci95([]) is None and stats.mean([]) is None


def test_wilson_interval_textbook_value() -> None:
    lo, hi = stats.wilson_ci95(8, 10) or (0, 0)
    assert (lo, hi) == pytest.approx((0.4902, 0.9433), abs=1e-4)
    assert stats.wilson_ci95(0, 0) is None and stats.wilson_ci95(0, 5)[0] == 0.0  # type: ignore[index]


def test_pass_at_k_and_pass_hat_k() -> None:
    assert stats.pass_at_k(10, 3, 1) == pytest.approx(0.3)
    assert stats.pass_at_k(10, 3, 5) == pytest.approx(1 - math.comb(7, 5) / math.comb(10, 5))
    assert (
        stats.pass_at_k(5, 0, 3) == 0.0
        and stats.pass_at_k(5, 3, 3) == 1.0
        and stats.pass_at_k(0, 0, 3) == 0.0
    )
    assert stats.pass_hat_k(10, 3, 2) == pytest.approx(3 / 45) and stats.pass_hat_k(4, 4, 3) == 1.0


def test_holm_on_a_known_list() -> None:
    assert stats.holm([0.01, 0.04, 0.03, None]) == pytest.approx([0.03, 0.06, 0.06, None], nan_ok=True)
    assert stats.holm([0.5, 0.9]) == [1.0, 1.0]  # step-down keeps adjusted values monotone


def test_paired_binary_uses_exact_mcnemar() -> None:
    base = [0.0] * 10 + [1.0] * 10
    cand = [1.0] * 10 + [1.0] * 10
    result = stats.paired_comparison(base, cand, binary=True, seed=1)
    assert result.test == "mcnemar_exact" and result.delta == pytest.approx(0.5)
    assert result.p_value == pytest.approx(sp.binomtest(10, 10, 0.5).pvalue)
    assert result.ci95 is not None and result.ci95[0] > 0


def test_paired_scores_use_wilcoxon_and_are_deterministic() -> None:
    rng = np.random.default_rng(0)
    base = list(rng.uniform(0, 1, 30))
    cand = [b + 0.1 + rng.normal(0, 0.05) for b in base]
    first = stats.paired_comparison(base, cand, binary=False, seed=9)
    assert first == stats.paired_comparison(base, cand, binary=False, seed=9)
    assert first.test == "wilcoxon" and first.p_value is not None and first.p_value < 0.001
    assert stats.paired_comparison(base, base, binary=False, seed=9).p_value == 1.0
    with pytest.raises(ValueError):
        stats.paired_comparison([1.0], [], binary=False, seed=0)


def test_pick_winner() -> None:
    means = {"base": 0.5, "a": 0.7, "b": 0.6}
    assert stats.pick_winner("base", means, {"a": 0.01, "b": 0.2}, {"a": 0.2, "b": 0.1}) == ("a", True)
    assert stats.pick_winner("base", means, {"a": 0.2, "b": 0.2}, {"a": 0.2, "b": 0.1}) == ("a", False)
    assert stats.pick_winner("base", {"base": 0.5, "a": 0.5}, {}, {}) == (None, False)


@given(st.lists(st.floats(0, 1), min_size=1, max_size=40))
def test_interval_contains_the_mean(values: list[float]) -> None:
    lo, hi = stats.mean_ci95(values) or (0, 0)
    m = stats.mean(values) or 0
    assert lo - 1e-9 <= m <= hi + 1e-9


@given(st.integers(1, 30), st.integers(1, 10), st.data())
def test_pass_at_k_is_a_monotone_probability(n: int, k: int, data: st.DataObject) -> None:
    c = data.draw(st.integers(0, n - 1))
    assert 0.0 <= stats.pass_at_k(n, c, k) <= stats.pass_at_k(n, c + 1, k) <= 1.0
    lo, hi = stats.wilson_ci95(c, n) or (0, 0)
    assert 0.0 <= lo <= c / n <= hi <= 1.0


@given(st.lists(st.one_of(st.none(), st.floats(0, 1)), max_size=8))
def test_holm_never_lowers_a_p_value(p_values: list[float | None]) -> None:
    for raw, adjusted in zip(p_values, stats.holm(p_values), strict=True):
        assert (raw is None) == (adjusted is None)
        if raw is not None and adjusted is not None:
            assert raw <= adjusted <= 1.0


def test_aa_experiments_rarely_declare_a_winner() -> None:
    """1,000 A/A experiments on a noisy target: a significant winner at most 5% of the time."""
    rng = np.random.default_rng(2026)
    false_winners = 0
    for experiment in range(1000):
        difficulty = rng.uniform(0.2, 0.8, 30)
        base = np.clip(difficulty + rng.normal(0, 0.15, 30), 0, 1)
        cand = np.clip(difficulty + rng.normal(0, 0.15, 30), 0, 1)
        result = stats.paired_comparison(list(base), list(cand), binary=False, seed=experiment, resamples=200)
        (adjusted,) = stats.holm([result.p_value])
        means = {"baseline": float(base.mean()), "candidate": float(cand.mean())}
        _, significant = stats.pick_winner(
            "baseline", means, {"candidate": adjusted}, {"candidate": result.delta}
        )
        false_winners += significant
    assert false_winners / 1000 <= 0.05
