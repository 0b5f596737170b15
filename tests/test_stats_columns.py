"""The comparison's statistics on case columns give the numbers the per-case Python paths give: the
exact differences and means (int64 and Python-int paths), Holm, Fisher per distinct table, the
cost bootstrap, the latency histogram's buckets."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from hdrh.histogram import HdrHistogram
from hypothesis import example, given, settings
from hypothesis import strategies as st

from engine.stats import inference
from engine.stats.columns import fisher_by_table, holm_array, ratio_mean, scaled_differences
from engine.stats.gates import RESAMPLES, _percentiles, fisher_exact
from engine.stats.histograms import recorded, recorded_arrays
from engine.stats.inference import paired_comparison, paired_result
from engine.stats.signflip import ScaledDifferences
from tests.shims import mean_ratio_interval

ratios = st.tuples(st.integers(-(10**4), 10**4), st.integers(1, 10**4))  # exact p's work grows with them
small = st.tuples(st.integers(0, 5), st.integers(1, 5))
pairs = st.lists(st.tuples(st.one_of(small, ratios), st.one_of(small, ratios)), min_size=1, max_size=40)


def _arrays(values: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    return np.array([n for n, _ in values], dtype=np.int64), np.array([d for _, d in values], dtype=np.int64)


@settings(max_examples=100, deadline=None)
@given(pairs)
@example([((1, 3), (0, 1)), ((2, 3), (1, 3))])  # equal differences, different denominators
@example([((0, 5), (0, 5))])  # nothing changed
@example([((10**12, 1), (-(10**12), 7))] * 30)  # past int64 once scaled: the Python-int path
@example([((k % 6, 5), ((k * 7) % 6, 5)) for k in range(40)])  # many changed: the studentized form
def test_exact_differences_and_means_are_the_fraction_paths(values: list) -> None:
    base = [Fraction(*b) for b, _ in values]
    cand = [Fraction(*c) for _, c in values]
    b_num, b_den = _arrays([b for b, _ in values])
    c_num, c_den = _arrays([c for _, c in values])
    fast = scaled_differences(b_num, b_den, c_num, c_den)
    assert fast == ScaledDifferences.of(base, cand)
    assert ratio_mean(b_num, b_den) == inference.mean(base)
    assert ratio_mean(c_num, c_den) == inference.mean(cand)
    assert fast.sign_flip_test() == ScaledDifferences.of(base, cand).sign_flip_test()
    assert paired_result(fast, seed=3, resamples=50) == paired_comparison(base, cand, seed=3, resamples=50)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.one_of(st.sampled_from([0.0, 1.0, 0.05, 1e-7]), st.floats(0.0, 1.0)), min_size=1, max_size=60)
)
@example([0.01, 0.01, 0.01])  # ties keep their given order
@example([1.0, 0.3, 0.3, 1e-9, 0.0])
def test_holm_array_is_holm(p_values: list[float]) -> None:
    assert holm_array(p_values).tolist() == inference.holm(p_values)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 6), st.integers(0, 6), st.integers(0, 6), st.integers(0, 6)), max_size=30
    )
)
@example([(1, 40_000, 0, 3)])  # past the packed key: rows compared as they are
def test_fisher_by_table_is_fisher_exact_per_row(rows: list[tuple[int, int, int, int]]) -> None:
    tables = [(min(a, b), max(a, b), min(c, d), max(c, d)) for a, b, c, d in rows if max(a, b) and max(c, d)]
    found = fisher_by_table(np.array(tables, dtype=np.int64).reshape(-1, 4)).tolist()
    assert found == [fisher_exact(*t) for t in tables]


def _old_mean_ratio_interval(base: list, cand: list, seed: int, level: float) -> tuple[float, float] | None:
    """The cost bootstrap as it was: one (rows, n, 2) gather per block."""
    rng = np.random.default_rng(seed)
    n = len(base)
    b, c = np.array(base, dtype=float), np.array(cand, dtype=float)
    b_sum, c_sum = np.empty((RESAMPLES, 2)), np.empty((RESAMPLES, 2))
    rows = max(1, (1 << 18) // n)
    for start in range(0, RESAMPLES, rows):
        idx = rng.integers(0, n, size=(min(rows, RESAMPLES - start), n))
        b_sum[start : start + len(idx)] = b[idx].sum(axis=1)
        c_sum[start : start + len(idx)] = c[idx].sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = (c_sum[:, 0] / c_sum[:, 1]) / (b_sum[:, 0] / b_sum[:, 1])
    ratios = ratios[np.isfinite(ratios)]
    return _percentiles(ratios, level) if len(ratios) else None


def test_the_cost_bootstrap_by_columns_is_the_gather_of_pairs() -> None:
    rng = np.random.default_rng(5)
    for n in (1, 7, 300, 20_000):  # 20,000 cases: blocks of 13 rows
        base = [
            (int(s), int(t)) for s, t in zip(rng.integers(0, 10**7, n), rng.integers(1, 6, n), strict=True)
        ]
        cand = [
            (int(s), int(t)) for s, t in zip(rng.integers(0, 10**7, n), rng.integers(1, 6, n), strict=True)
        ]
        assert mean_ratio_interval(base, cand, 11, 0.975) == _old_mean_ratio_interval(base, cand, 11, 0.975)


def test_histogram_buckets_by_numpy_are_hdrh_s() -> None:
    rng = np.random.default_rng(2)
    hist = HdrHistogram(1, 24 * 3600 * 1_000_000, 3)
    for value in rng.lognormal(11, 2, 50_000).astype(int).clip(1, 24 * 3600 * 1_000_000 - 1):
        hist.record_value(int(value))
    values, counts = recorded_arrays(hist)
    assert (values.tolist(), counts.tolist()) == recorded(hist)
    empty = recorded_arrays(HdrHistogram(1, 1000, 2))
    assert empty[0].tolist() == [] and empty[1].tolist() == []
