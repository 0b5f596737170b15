"""The gates' statistics: Fisher's exact test, and ratio intervals that noise alone does not push up."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
from hdrh.histogram import HdrHistogram
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.stats.gates import fisher_exact, p95_ratio_interval
from tests.shims import mean_ratio_interval


@given(st.integers(0, 12), st.integers(1, 12), st.integers(0, 12), st.integers(1, 12))
@settings(max_examples=200, deadline=None)
def test_fisher_matches_scipy(a: int, n: int, b: int, m: int) -> None:
    a, b = min(a, n), min(b, m)
    expected = scipy.stats.fisher_exact([[a, n - a], [b, m - b]]).pvalue
    assert fisher_exact(a, n, b, m) == pytest.approx(expected, rel=1e-9)


def test_a_case_that_broke_on_every_replica_is_decisive() -> None:
    assert fisher_exact(10, 10, 0, 10) == pytest.approx(2 / 184756)  # 1.08e-5
    assert fisher_exact(10, 10, 9, 10) == 1.0


def histogram(latencies_ms: np.ndarray) -> HdrHistogram:
    hist = HdrHistogram(1, 60_000_000, 3)
    for ms in latencies_ms:
        hist.record_value(max(1, round(ms * 1000)))
    return hist


def test_p95_noise_does_not_fire_and_a_real_rise_does() -> None:
    rng = np.random.default_rng(8)
    # two draws of one distribution whose p95s differ by over 20%: the bare rule called that a regression
    for _ in range(200):
        base, cand = rng.lognormal(3, 0.6, 50), rng.lognormal(3, 0.6, 50)
        if np.percentile(cand, 95) > 1.2 * np.percentile(base, 95):
            break
    lo, hi = p95_ratio_interval(histogram(base), histogram(cand), seed=1, level=0.95)
    assert lo <= 1.2 <= hi  # not a regression: the interval does not lie above the threshold
    slower = p95_ratio_interval(histogram(base), histogram(cand * 2.0), seed=1, level=0.95)
    assert slower[0] > 1.2
    assert p95_ratio_interval(histogram(base), histogram(cand), seed=1, level=0.95) == (lo, hi)  # seeded


def test_cost_ratio_resamples_cases() -> None:
    rng = np.random.default_rng(3)
    spend = [(int(s), 3) for s in rng.integers(1000, 5000, 30)]
    same = mean_ratio_interval(spend, spend, seed=0, level=0.95)
    assert same == (1.0, 1.0)
    doubled = mean_ratio_interval(spend, [(2 * s, n) for s, n in spend], seed=0, level=0.95)
    assert doubled == pytest.approx((2.0, 2.0))
    noisy = mean_ratio_interval(spend, [(int(s * rng.uniform(0.8, 1.2)), n) for s, n in spend], 0, 0.95)
    assert noisy[0] < 1.0 < noisy[1] < 1.2
    assert mean_ratio_interval([(0, 3)], [(5, 3)], seed=0, level=0.95) is None  # nothing spent before


def test_p95_draws_have_the_distribution_of_resampled_p95s() -> None:
    """The order-statistic shortcut against the definition: resample n trials, take the nearest rank."""
    from engine.stats.gates import _p95_draws
    from engine.stats.histograms import recorded

    rng = np.random.default_rng(5)
    hist = histogram(rng.lognormal(3, 0.6, 37))
    values, counts = recorded(hist)
    n = sum(counts)
    pool = np.repeat(values, counts)
    resampled = np.sort(pool[rng.integers(0, n, (100_000, n))], axis=1)[:, -(-95 * n // 100) - 1]
    drawn = _p95_draws(hist, np.random.default_rng(6), 100_000)
    for value in np.unique(pool)[-6:]:  # the p95 of 37 trials is one of the top few values
        assert np.mean(drawn <= value) == pytest.approx(np.mean(resampled <= value), abs=0.01)
