"""Statistics of the regression gates in `engine compare`: noise-aware latency and cost rules, and an
exact per-case test.

A gate on "p95 latency rose by more than 20%" fires on noise alone (12-14% of A/A pairs did), so the
rules here ask the data: a seeded bootstrap interval of the candidate/baseline ratio must lie wholly
above 1 + threshold. Latency resamples trials (from the histogram's buckets, each resample's p95 drawn
from its exact order-statistic distribution, so a 50,000-trial run costs no more than a small one);
cost resamples cases, paired, since cases are the unit and a case's trials share its prompt length.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence

from hdrh.histogram import HdrHistogram

from engine.stats.histograms import recorded_arrays
from engine.stats.student_t import betainc

RESAMPLES = 2000
_BLOCK = 1 << 18  # index cells drawn at a time by the cost bootstrap


def _p95_draws(hist: HdrHistogram, rng: object, resamples: int) -> object:
    """The p95 (nearest rank) of `resamples` bootstrap resamples of the histogram's trials, drawn
    from its exact distribution instead of resample by resample.

    In a resample of n trials the rank-th smallest is <= v exactly when at least `rank` draws are,
    so P(X_(rank) <= v) = P(Binomial(n, F(v)) >= rank) = I_F(v)(rank, n - rank + 1), the regularized
    incomplete beta function; one uniform per resample inverts that CDF. It is the same
    distribution a multinomial draw per resample gives, in O(buckets) rather than
    O(resamples x buckets) (benchmarks/README.md#in-code-stats)."""
    import numpy as np

    values, counts = recorded_arrays(hist)
    n = int(counts.sum())
    rank = -(-95 * n // 100)  # nearest rank, as the report's p95
    at_most = np.array(_order_cdf(rank, n, np.minimum(np.cumsum(counts) / n, 1.0).tolist()))
    at_most[-1] = 1.0  # the largest value is never below the rank-th one
    at = np.searchsorted(at_most, rng.random(resamples), side="left")  # type: ignore[attr-defined]
    return values.astype(float)[at]


def _order_cdf(rank: int, n: int, shares: list[float]) -> list[float]:
    """I_F(rank, n - rank + 1) for each share F (ascending). It is monotone in F, so from the share
    nearest rank / n outwards, once it is below the smallest uniform draw above 0 (2^-53) the rest
    act as 0, and once it is at or above the largest (1 - 2^-53) the rest act as 1: a draw picks the
    same bucket either way (searchsorted against multiples of 2^-53). So only the buckets near the
    p95 cost a continued fraction: 100,000 trials cost no more than 1,000."""
    out = [0.0] * len(shares)
    middle = bisect.bisect_left(shares, rank / n)
    for i in range(middle, len(shares)):
        out[i] = betainc(rank, n - rank + 1, shares[i])
        if out[i] >= _TOP:
            out[i + 1 :] = [1.0] * (len(shares) - i - 1)
            break
    for i in range(middle - 1, -1, -1):
        out[i] = betainc(rank, n - rank + 1, shares[i])
        if out[i] < _STEP:
            break
    return out


_STEP = 2.0**-53  # numpy's Generator.random() draws multiples of this in [0, 1)
_TOP = 1.0 - _STEP


def p95_ratio_interval(
    base: HdrHistogram, cand: HdrHistogram, seed: int, level: float
) -> tuple[float, float] | None:
    """Bootstrap interval (two-sided, `level`) of p95(candidate) / p95(baseline); None without trials."""
    import numpy as np

    if not base.get_total_count() or not cand.get_total_count():
        return None
    rng = np.random.default_rng(seed)
    ratios = _p95_draws(cand, rng, RESAMPLES) / _p95_draws(base, rng, RESAMPLES)  # type: ignore[operator]
    return _percentiles(ratios, level)


def spend_ratio_interval(
    base: tuple[Sequence[int], Sequence[int]], cand: tuple[Sequence[int], Sequence[int]], seed: int,
    level: float,
) -> tuple[float, float] | None:  # fmt: skip
    """Bootstrap interval of (candidate's spend per trial) / (baseline's), resampling cases paired,
    from the cases' columns: (spend, trials) of the baseline, of the candidate. None when the
    baseline spent nothing."""
    import numpy as np

    n = len(base[0])
    if not n or sum(int(s) for s in base[0]) == 0:
        return None
    rng = np.random.default_rng(seed)
    columns = [np.asarray(column, dtype=float) for column in (*base, *cand)]
    # each resample's sums: spend, trials (baseline), spend, trials (candidate). Drawn in blocks of
    # rows (the Generator's stream is the same however a draw is split) so memory stays bounded: one
    # gather of them all grew with resamples x cases (benchmarks/README.md#in-code-memory). The sums are of
    # integers (fixed-point spend, trial counts) below 2^53: exact in any order.
    sums = np.empty((4, RESAMPLES))
    rows = max(1, _BLOCK // n)
    for start in range(0, RESAMPLES, rows):
        idx = rng.integers(0, n, size=(min(rows, RESAMPLES - start), n))
        for column, out in zip(columns, sums, strict=True):
            out[start : start + len(idx)] = column[idx].sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = (sums[2] / sums[3]) / (sums[0] / sums[1])
    ratios = ratios[np.isfinite(ratios)]
    return _percentiles(ratios, level) if len(ratios) else None


def _percentiles(ratios: object, level: float) -> tuple[float, float]:
    import numpy as np

    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(ratios, [tail, 100 - tail])
    return (round(float(lo), 6), round(float(hi), 6))


def fisher_exact(passes_a: int, runs_a: int, passes_b: int, runs_b: int) -> float:
    """Two-sided Fisher exact p for two pass counts (a case's replicas in two runs), in integers: the
    tables with the same margins at most as likely as the observed one (10/10 -> 0/10 gives 1.1e-5)."""
    total, passes = runs_a + runs_b, passes_a + passes_b
    lowest, highest = max(0, passes - runs_b), min(passes, runs_a)

    def weight(x: int) -> int:  # proportional to P(X = x): the denominator C(total, runs_a) is shared
        return math.comb(passes, x) * math.comb(total - passes, runs_a - x)

    observed = weight(passes_a)
    extreme = sum(w for w in (weight(x) for x in range(lowest, highest + 1)) if w <= observed)
    return min(1.0, extreme / math.comb(total, runs_a))
