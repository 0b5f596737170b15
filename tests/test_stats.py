"""stats.inference against scipy and textbook numbers, plus Hypothesis properties and determinism."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import scipy.stats
from hypothesis import example, given, settings
from hypothesis import strategies as st

from engine.stats import inference as stats
from engine.stats.signflip import EXACT_BELOW
from tests.shims import lower_ci_bound

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_subnormal=False)
unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False, allow_subnormal=False)
counts = st.integers(min_value=0, max_value=60).flatmap(
    lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(0, 70))
)


def is_12_digits(x: float) -> bool:
    return float(f"{x:.12g}") == x


# --- means and intervals -------------------------------------------------------------------------


def test_mean() -> None:
    assert stats.mean([]) is None
    assert stats.mean([1.0, 2.0, 3.0, 4.0]) == 2.5
    # fsum: the tiny value survives the cancellation whatever the order.
    assert stats.mean([1e16, 1.0, -1e16]) == stats.mean([1.0, -1e16, 1e16]) == pytest.approx(1 / 3)


def test_mean_ci95_textbook() -> None:
    # mean 3, s = 1.5811, se = 0.7071, t(0.975, 4) = 2.776445
    lo, hi = stats.mean_ci95([1.0, 2.0, 3.0, 4.0, 5.0])
    assert (lo, hi) == pytest.approx((1.036757, 4.963243), abs=1e-6)


def test_mean_ci95_matches_scipy() -> None:
    values = [0.2, 0.9, 0.4, 0.75, 0.5, 0.1, 0.66]
    m, sem = np.mean(values), scipy.stats.sem(values)
    expected = scipy.stats.t.interval(0.95, len(values) - 1, loc=m, scale=sem)
    assert stats.mean_ci95(values) == pytest.approx(expected, rel=1e-11)


def test_mean_ci95_edges() -> None:
    assert stats.mean_ci95([]) is None
    assert stats.mean_ci95([0.7]) == (0.7, 0.7)
    assert stats.mean_ci95([0.3, 0.3, 0.3]) == (0.3, 0.3)
    assert lower_ci_bound([]) is None
    assert lower_ci_bound([0.7]) == 0.7
    # Nothing is clamped: scores in [0, 1] may still give an interval reaching below 0.
    assert lower_ci_bound([0.0, 0.0, 1.0]) < 0.0


@given(st.lists(finite, min_size=1, max_size=40))
@settings(deadline=None)
def test_mean_ci95_contains_the_mean(values: list[float]) -> None:
    lo, hi = stats.mean_ci95(values)
    assert lo <= stats.mean(values) <= hi
    assert lower_ci_bound(values) == lo
    assert is_12_digits(lo) and is_12_digits(hi)


def test_wilson_textbook() -> None:
    assert stats.wilson_ci95(8, 10) == pytest.approx((0.490162, 0.943318), abs=1e-6)
    lo, hi = stats.wilson_ci95(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.277533, abs=1e-6)
    lo, hi = stats.wilson_ci95(10, 10)
    assert hi == 1.0 and lo == pytest.approx(0.722467, abs=1e-6)
    assert stats.wilson_ci95(0, 0) is None
    with pytest.raises(ValueError):
        stats.wilson_ci95(11, 10)


@given(st.integers(1, 500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
@settings(deadline=None)
def test_wilson_matches_scipy_and_contains_the_rate(case: tuple[int, int]) -> None:
    passes, n = case
    lo, hi = stats.wilson_ci95(passes, n)
    ref = scipy.stats.binomtest(passes, n).proportion_ci(method="wilson")
    assert (lo, hi) == pytest.approx((ref.low, ref.high), rel=1e-9, abs=1e-12)
    assert 0.0 <= lo <= passes / n <= hi <= 1.0


# --- pass@k and pass^k ----------------------------------------------------------------------------


def chen_pass_at_k(n: int, c: int, k: int) -> float:
    """The numerically stable form from the Codex paper (Chen et al. 2021, figure 3)."""
    if n - c < k:
        return 1.0
    return 1.0 - float(np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


def test_pass_at_k_known_values() -> None:
    assert stats.pass_at_k(10, 3, 1) == 0.3
    assert stats.pass_at_k(10, 3, 2) == pytest.approx(1 - 21 / 45)  # 1 - C(7,2)/C(10,2)
    assert stats.pass_at_k(200, 10, 100) == pytest.approx(chen_pass_at_k(200, 10, 100), rel=1e-12)
    assert stats.pass_at_k(5, 0, 3) == 0.0
    assert stats.pass_at_k(5, 5, 3) == 1.0
    assert stats.pass_at_k(5, 3, 3) == 1.0  # only 2 failures: any 3 draws include a pass
    assert stats.pass_at_k(0, 0, 3) == 0.0
    # n < k: judged on the n attempts there are.
    assert stats.pass_at_k(3, 1, 5) == stats.pass_at_k(3, 1, 3) == 1.0
    assert stats.pass_at_k(3, 0, 5) == 0.0


def test_pass_hat_k_known_values() -> None:
    assert stats.pass_hat_k(10, 8, 2) == pytest.approx(28 / 45)  # C(8,2)/C(10,2)
    assert stats.pass_hat_k(10, 7, 1) == 0.7
    assert stats.pass_hat_k(3, 2, 5) == stats.pass_hat_k(3, 2, 3) == 0.0
    assert stats.pass_hat_k(3, 3, 5) == 1.0
    assert stats.pass_hat_k(0, 0, 2) == 0.0


def test_pass_k_rejects_impossible_counts() -> None:
    for args in [(3, 4, 1), (3, -1, 1), (-1, 0, 1), (3, 1, -1)]:
        with pytest.raises(ValueError):
            stats.pass_at_k(*args)
        with pytest.raises(ValueError):
            stats.pass_hat_k(*args)


@given(counts)
def test_pass_at_k_properties(case: tuple[int, int, int]) -> None:
    n, c, k = case
    at, hat = stats.pass_at_k(n, c, k), stats.pass_hat_k(n, c, k)
    assert 0.0 <= hat <= 1.0 and 0.0 <= at <= 1.0
    if c < n:
        assert stats.pass_at_k(n, c + 1, k) >= at  # more passes never hurt
        assert stats.pass_hat_k(n, c + 1, k) >= hat
    assert stats.pass_at_k(n, c, k + 1) >= at  # more attempts: more chances of one pass
    assert stats.pass_hat_k(n, c, k + 1) <= hat  # ... and fewer of all passing
    if n and k:
        assert hat <= c / n + 1e-12 <= at + 2e-12
        assert at == pytest.approx(chen_pass_at_k(n, c, min(k, n)), abs=1e-10)


# --- paired comparison ----------------------------------------------------------------------------


def test_paired_rejects_bad_input() -> None:
    with pytest.raises(ValueError):
        stats.paired_comparison([1.0, 2.0], [1.0], seed=0)
    with pytest.raises(ValueError):
        stats.paired_comparison([1.0], [math.nan], seed=0)


def test_paired_with_no_pairs() -> None:
    empty = stats.PairedResult(delta=None, ci95=None, p_value=None, test="none", n_pairs=0)
    assert stats.paired_comparison([], [], seed=0) == empty


def mid_p_binomial(k: int, m: int) -> float:
    """SciPy's exact two-sided binomial test of k of m at 1/2 less half the observed outcomes' mass."""
    at = scipy.stats.binom.pmf(k, m, 0.5) * (1 if 2 * k == m else 2)
    return scipy.stats.binomtest(k, m, 0.5).pvalue - at / 2


def test_on_pass_fail_it_is_the_mid_p_mcnemar_test() -> None:
    # 7 cases fixed by the candidate, 1 broken, 12 concordant: binomial test of 7 of 8 at 1/2, mid-p.
    base = [0.0] * 7 + [1.0] + [1.0] * 6 + [0.0] * 6
    cand = [1.0] * 7 + [0.0] + [1.0] * 6 + [0.0] * 6
    r = stats.paired_comparison(base, cand, seed=3)
    assert r.test == "sign_flip_mid_p" and r.n_pairs == 20
    assert r.p_value == pytest.approx(0.0390625)  # 2 * (1 + 8 / 2) / 256 (the exact test's 0.0703 before)
    assert r.p_value == pytest.approx(mid_p_binomial(7, 8), rel=1e-11)
    assert r.delta == pytest.approx(np.mean(cand) - np.mean(base))
    assert r.ci95[0] <= r.delta <= r.ci95[1]


def test_without_any_change_p_is_1() -> None:
    r = stats.paired_comparison([1.0, 0.0, 1.0], [1.0, 0.0, 1.0], seed=0)
    assert (r.delta, r.ci95, r.p_value, r.test) == (0.0, (0.0, 0.0), 1.0, "sign_flip_mid_p")


def test_equal_differences_are_equal_and_the_test_is_scale_invariant() -> None:
    # 8 cases +1/3 and 4 cases -1/3 over 3 repeats, as exact per-case pass rates; the same pattern at +-1
    # and at +-0.05 (a judge's scale). Floats of thirds differ in the last bit (2/3-1/3 != 1/3-0);
    # the old rank test split them and gave 0.248 against 0.388.
    up = [(Fraction(1, 3), Fraction(2, 3)), (Fraction(0), Fraction(1, 3))] * 4
    down = [(Fraction(2, 3), Fraction(1, 3)), (Fraction(1), Fraction(2, 3))] * 2
    thirds = stats.paired_comparison([b for b, _ in up + down], [c for _, c in up + down], seed=1)
    ones = stats.paired_comparison([0.0] * 12, [1.0] * 8 + [-1.0] * 4, seed=1)
    twentieths = stats.paired_comparison([0.5] * 12, [0.55] * 8 + [0.45] * 4, seed=1)
    assert thirds.p_value == ones.p_value == twentieths.p_value == pytest.approx(
        mid_p_binomial(8, 12), rel=1e-11
    )


def test_four_cases_moving_alike_are_not_significant_whatever_the_unchanged_ones() -> None:
    # mid-p: none of the 16 sign patterns is beyond, 2 are at the observed sum: p = 1/16; the paired
    # t-test says 0.037 once 6 unchanged cases join them (their zeros shrink its standard deviation)
    for unchanged in (0, 3, 6):
        r = stats.paired_comparison([0.0] * (4 + unchanged), [0.4] * 4 + [0.0] * unchanged, seed=0)
        assert r.p_value == 0.0625 and r.test == "sign_flip_mid_p"
    five = stats.paired_comparison([0.0] * 5, [0.4] * 5, seed=0)
    assert five.p_value == 0.03125  # 2 of 32 patterns at the observed sum, halved


def brute_force_sign_flip(diffs: list[float]) -> float:
    observed = abs(sum(diffs))
    patterns = range(1 << len(diffs))
    sums = [abs(sum(d if (pattern >> i) & 1 else -d for i, d in enumerate(diffs))) for pattern in patterns]
    beyond = sum(1 for s in sums if s > observed + 1e-12)
    at = sum(1 for s in sums if abs(s - observed) <= 1e-12)
    return (beyond + at / 2) / len(sums)


def test_continuous_scores_on_few_cases_list_every_sign_pattern() -> None:
    cand = [0.11, 0.32, -0.05, 0.24, 0.07, 0.41, -0.13, 0.18, 0.29, 0.02]
    r = stats.paired_comparison([0.0] * 10, cand, seed=0)
    assert r.test == "sign_flip_mid_p" and r.p_value == pytest.approx(brute_force_sign_flip(cand), rel=1e-12)
    graded = [0.25, 0.5, -0.25, 0.75, 0.25, 0.0, -0.5, 0.25, 0.5]  # on a lattice: the distribution is built
    r = stats.paired_comparison([0.0] * 9, graded, seed=0)
    assert r.p_value == pytest.approx(brute_force_sign_flip(graded), rel=1e-12)


def test_many_continuous_cases_take_the_studentized_form() -> None:
    rng = np.random.default_rng(4)
    base, cand = rng.random(200).tolist(), (rng.random(200) + 0.05).tolist()
    r = stats.paired_comparison(base, cand, seed=0)
    assert r.test == "sign_flip_t"
    assert r.p_value == pytest.approx(scipy.stats.ttest_rel(cand, base).pvalue, rel=1e-9)


def test_cluster_rate_interval() -> None:
    # equal repeats per case: the t interval of the per-case rates (the mean score's, on pass/fail), in [0, 1]
    passes, runs = [3, 0, 2, 3, 1, 3], [3] * 6
    lo, hi = stats.mean_ci95([p / 3 for p in passes])
    assert stats.cluster_rate_ci95(passes, runs) == pytest.approx((max(0.0, lo), min(1.0, hi)), abs=1e-11)
    assert stats.cluster_rate_ci95([2], [3]) is None  # one case: nothing to generalise over
    assert stats.cluster_rate_ci95([3, 3], [3, 3]) == (1.0, 1.0)
    lo, hi = stats.cluster_rate_ci95([9, 0, 10], [10, 10, 10])
    assert 0.0 <= lo < 19 / 30 < hi <= 1.0


def reference_bootstrap(diffs: list[float], seed: int, resamples: int) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    data = np.asarray(diffs)
    means = data[rng.integers(0, len(data), size=(resamples, len(data)))].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(lo), float(hi)


def test_bootstrap_interval_is_the_percentile_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    base = [float(v) for v in np.random.default_rng(1).random(25)]
    cand = [float(v) for v in np.random.default_rng(2).random(25)]
    diffs = [c - b for b, c in zip(base, cand, strict=True)]
    r = stats.paired_comparison(base, cand, seed=11)
    assert r.ci95 == pytest.approx(reference_bootstrap(diffs, 11, 2000), rel=1e-11)
    # Drawing the index matrix in small blocks consumes the same random stream: identical result.
    monkeypatch.setattr(stats, "_BOOTSTRAP_BLOCK", 7 * 25)
    assert stats.paired_comparison(base, cand, seed=11) == r
    r200 = stats.paired_comparison(base, cand, seed=11, resamples=200)
    assert r200.ci95 == pytest.approx(reference_bootstrap(diffs, 11, 200), rel=1e-11)
    with pytest.raises(ValueError):
        stats.paired_comparison(base, cand, seed=11, resamples=0)


def test_paired_is_deterministic() -> None:
    rng = np.random.default_rng(5)
    base, cand = rng.random(40).tolist(), rng.random(40).tolist()
    first = stats.paired_comparison(base, cand, seed=42)
    assert stats.paired_comparison(base, cand, seed=42) == first
    assert repr(stats.paired_comparison(list(base), list(cand), seed=42)) == repr(first)
    assert stats.paired_comparison(base, cand, seed=43).ci95 != first.ci95
    assert all(is_12_digits(x) for x in (first.delta, first.p_value, *first.ci95))


@given(
    st.lists(st.tuples(unit, unit), min_size=1, max_size=30),
    st.integers(0, 2**32),
)
@settings(deadline=None, max_examples=60)
def test_paired_properties(pairs: list[tuple[float, float]], seed: int) -> None:
    base, cand = [b for b, _ in pairs], [c for _, c in pairs]
    r = stats.paired_comparison(base, cand, seed=seed, resamples=300)
    assert r.n_pairs == len(pairs) and r.test in ("sign_flip_mid_p", "sign_flip_t")
    assert r.ci95[0] <= r.delta <= r.ci95[1]
    assert 0.0 <= r.p_value <= 1.0
    assert r == stats.paired_comparison(base, cand, seed=seed, resamples=300)
    # Swapping the roles mirrors the result: same p, negated delta.
    swapped = stats.paired_comparison(cand, base, seed=seed, resamples=300)
    assert swapped.delta == pytest.approx(-r.delta, abs=1e-11)
    assert swapped.p_value == pytest.approx(r.p_value, rel=1e-9)


@given(st.lists(st.tuples(st.sampled_from([0.0, 1.0]), st.sampled_from([0.0, 1.0])), min_size=1, max_size=40))
@example([(0.0, 1.0)] * 9 + [(1.0, 0.0)] * 11)  # 20 changed cases: the t form, always tried
@settings(deadline=None, max_examples=60)
def test_binary_properties(pairs: list[tuple[float, float]]) -> None:
    base, cand = [b for b, _ in pairs], [c for _, c in pairs]
    r = stats.paired_comparison(base, cand, seed=1, resamples=300)
    gained = sum(1 for b, c in pairs if c > b)
    lost = sum(1 for b, c in pairs if c < b)
    if gained + lost < EXACT_BELOW:  # exact: the sign test is the binomial one, mid-p
        expected = mid_p_binomial(gained, gained + lost) if gained + lost else 1.0
        assert r.p_value == pytest.approx(expected, rel=1e-11)
    else:  # from 20 changed cases on, Student's t on the differences (stats/signflip.py says why)
        assert r.test == "sign_flip_t" and 0.0 < r.p_value <= 1.0
    assert r.delta == pytest.approx((gained - lost) / len(pairs), abs=1e-12)
    assert r.ci95[0] <= r.delta <= r.ci95[1]


# --- multiple comparisons and the winner ----------------------------------------------------------


def test_holm_known_list() -> None:
    # sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> raised to 0.06 (monotone)
    assert stats.holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert stats.holm([0.5, 0.6]) == [1.0, 1.0]
    assert stats.holm([None, 0.01, None, 0.04]) == [None, pytest.approx(0.02), None, 0.04]
    assert stats.holm([None]) == [None]
    assert stats.holm([]) == []
    assert stats.holm([0.2]) == [0.2]
    with pytest.raises(ValueError):
        stats.holm([1.5])


@given(st.lists(st.one_of(st.none(), unit), max_size=12))
def test_holm_properties(p_values: list[float | None]) -> None:
    adjusted = stats.holm(p_values)
    assert [a is None for a in adjusted] == [p is None for p in p_values]
    pairs = [(p, a) for p, a in zip(p_values, adjusted, strict=True) if p is not None]
    m = len(pairs)
    for p, a in pairs:
        assert p <= a <= 1.0
        assert a <= min(1.0, m * p) * (1 + 1e-11)  # never stricter than Bonferroni
    # Monotone: a smaller raw p never gets a larger adjusted p.
    for p1, a1 in pairs:
        for p2, a2 in pairs:
            if p1 < p2:
                assert a1 <= a2


def test_pick_winner() -> None:
    means = {"base": 0.5, "a": 0.7, "b": 0.6}
    assert stats.pick_winner("base", means, {"a": 0.01, "b": 0.2}, {"a": 0.2, "b": 0.1}) == ("a", True)
    assert stats.pick_winner("base", means, {"a": 0.06, "b": 0.01}, {"a": 0.2, "b": 0.1}) == ("a", False)
    assert stats.pick_winner("base", means, {"a": 0.06}, {"a": 0.2}, alpha=0.1) == ("a", True)
    assert stats.pick_winner("base", means, {"a": 0.01}, {"a": -0.01}) == ("a", False)  # delta disagrees
    assert stats.pick_winner("base", means, {"a": None}, {"a": 0.2}) == ("a", False)
    assert stats.pick_winner("base", means, {"a": 0.01}, {"a": None}) == ("a", False)
    assert stats.pick_winner("base", means, {}, {}) == ("a", False)


def test_pick_winner_baseline_ties_and_missing() -> None:
    assert stats.pick_winner("base", {"base": 0.9, "a": 0.7}, {"a": 0.01}, {"a": 0.2}) == ("base", False)
    assert stats.pick_winner("base", {"base": 0.7, "a": 0.7}, {"a": 0.01}, {"a": 0.2}) == (None, False)
    assert stats.pick_winner("base", {"base": 0.5, "a": 0.7, "b": 0.7}, {}, {}) == (None, False)
    assert stats.pick_winner("base", {}, {}, {}) == (None, False)
    assert stats.pick_winner("base", {"base": None, "a": None}, {}, {}) == (None, False)
    assert stats.pick_winner("base", {"base": None, "a": 0.1}, {"a": 0.01}, {"a": 0.1}) == ("a", True)
