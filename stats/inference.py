"""Pure, deterministic statistics for reports.

numpy is imported inside the functions that need it: its import is costly and most commands
(`engine --help`, `engine list`) never compute a statistic. SciPy is not used: its import alone
cost more than a 100,000-trial report (student_t.py has the t functions;
benchmarks/README.md#in-code-start-up).

Floats are rounded to 12 significant digits: numpy's SIMD summation and scipy's
special functions may differ in the last bits between machines or versions, and a
report rebuilt from the log must render to the same bytes as the one written live.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import NamedTuple

from engine.stats.signflip import ScaledDifferences
from engine.stats.student_t import t_ppf

# scipy.stats.norm.ppf(0.975), written out so that the Wilson interval needs no scipy import.
Z95 = 1.959963984540054
# The bootstrap draws its index matrix in blocks of about this many cells, so memory stays bounded for
# large suites. numpy's Generator yields the same stream however a draw is split, so blocks change nothing.
_BOOTSTRAP_BLOCK = 1 << 20


def _r(x: float) -> float:
    return float(f"{x:.12g}")


def _floats(values: Sequence[float | Fraction]) -> list[float]:
    """The values as floats, a Fraction as numerator / denominator: what float() of it gives (and
    what fsum and arithmetic with a float take), without numbers.Rational's slow __float__."""
    return [v.numerator / v.denominator if isinstance(v, Fraction) else v for v in values]


def mean(values: Sequence[float | Fraction]) -> float | None:
    # fsum is exact, so the result does not depend on the order the values arrived in.
    return _r(math.fsum(_floats(values)) / len(values)) if len(values) else None


def mean_ci95(values: Sequence[float | Fraction]) -> tuple[float, float] | None:
    """Student-t 95% interval of the mean; (v, v) for a single value."""
    n = len(values)
    if n == 0:
        return None
    values = _floats(values)
    m = math.fsum(values) / n
    sd = math.sqrt(math.fsum((v - m) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    if sd == 0.0:
        return (_r(m), _r(m))
    half = t_quantile_975(n - 1) * sd / math.sqrt(n)
    # Rounding is monotone, so the interval still contains mean(values), which is rounded the same way.
    return (_r(m - half), _r(m + half))


def t_quantile_975(df: int) -> float:
    # scipy.special.stdtrit's number without its import: see student_t.py
    return t_ppf(df, 0.975)


def cluster_rate_ci95(successes: Sequence[int], trials: Sequence[int]) -> tuple[float, float] | None:
    """95% interval of a pooled rate sum(successes) / sum(trials) whose trials come in clusters (a
    case's repeats): the cluster-robust (linearised ratio) variance over clusters, with Student's t.
    It generalises to a new draw of cases; on equal repeats per case it equals mean_ci95 of the
    per-case rates. With one cluster there is nothing to generalise over: None."""
    pairs = [(s, m) for s, m in zip(successes, trials, strict=True) if m > 0]
    k = len(pairs)
    if k < 2:
        return None
    total = sum(m for _, m in pairs)
    rate = Fraction(sum(s for s, _ in pairs), total)
    # sum((s - rate * m)^2) over total^2, in integers: the same exact value Fractions gave, faster
    # (benchmarks/README.md#in-code-stats)
    successes_all = rate.numerator * (total // rate.denominator)
    spread_num = sum((s * total - successes_all * m) ** 2 for s, m in pairs)
    if spread_num == 0:
        return (_r(float(rate)), _r(float(rate)))
    spread = Fraction(spread_num, total * total)
    half = t_quantile_975(k - 1) * math.sqrt(float(spread * k / (k - 1))) / total
    centre = float(rate)
    return (_r(max(0.0, centre - half)), _r(min(1.0, centre + half)))


def wilson_ci95(passes: int, n: int) -> tuple[float, float] | None:
    """Wilson score interval for a pass rate (sane at 0/n and n/n, unlike the normal interval)."""
    if n == 0:
        return None
    if not 0 <= passes <= n:
        raise ValueError(f"passes must be within 0..{n}, got {passes}")
    p = passes / n
    z2 = Z95 * Z95
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    # The exact interval always contains p and lies in [0, 1]; min/max only absorb rounding error
    # (at 0/n, centre - half comes out as 1e-17 rather than 0).
    return (_r(min(p, max(0.0, centre - half))), _r(max(p, min(1.0, centre + half))))


def _check_counts(n: int, c: int, k: int) -> int:
    if n < 0 or k < 0 or not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n and k >= 0, got n={n}, c={c}, k={k}")
    # Fewer attempts than k: judge on the attempts there are rather than report nothing.
    return min(k, n)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k (Chen et al. 2021): 1 - C(n-c, k) / C(n, k), from c passes in n attempts."""
    k = _check_counts(n, c, k)
    if n == 0:
        return 0.0
    if n - c < k:  # every draw of k attempts includes a pass
        return 1.0
    # math.comb is exact and int / int is correctly rounded, so large n cannot overflow or drift.
    return _r(1.0 - math.comb(n - c, k) / math.comb(n, k))


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k: the chance that k attempts drawn from the n all pass, C(c, k) / C(n, k)."""
    k = _check_counts(n, c, k)
    if n == 0:
        return 0.0
    return _r(math.comb(c, k) / math.comb(n, k))


class PairedResult(NamedTuple):
    delta: float | None  # mean(candidate - baseline) over pairs
    ci95: tuple[float, float] | None  # paired bootstrap percentile interval of delta
    p_value: float | None  # two-sided; None only when there are no pairs
    test: str  # "sign_flip_mid_p" | "sign_flip_t" | "none" (see stats/signflip.py)
    n_pairs: int


def paired_comparison(
    baseline: Sequence[float | Fraction],
    candidate: Sequence[float | Fraction],
    *,
    seed: int,
    resamples: int = 2000,
) -> PairedResult:
    """Compare two variants on the same cases (pairs by index): pass/fail, pass rates or scores, one test.

    Give per-case values as Fractions where they are ratios (2 of 3 repeats): the test then compares
    them exactly."""
    if len(baseline) != len(candidate):
        raise ValueError(f"paired comparison needs equal lengths, got {len(baseline)} and {len(candidate)}")
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    n = len(baseline)
    if n == 0:
        return PairedResult(None, None, None, "none", 0)
    # a Fraction is always finite (and isfinite would convert each one to a float to say so)
    if not all(isinstance(v, Fraction) or math.isfinite(v) for v in (*baseline, *candidate)):
        raise ValueError("paired comparison needs finite scores")
    return paired_result(ScaledDifferences.of(baseline, candidate), seed=seed, resamples=resamples)


def paired_result(exact: ScaledDifferences, *, seed: int, resamples: int = 2000) -> PairedResult:
    """paired_comparison of the exact differences (one per pair, at least one)."""
    n = len(exact.ints)
    diffs = exact.floats()
    # For 0/1 values this is also the difference of the pass rates.
    delta = _r(exact.total / (exact.scale * n))  # int / int is correctly rounded, as Fraction's float
    lo, hi = _bootstrap_ci(diffs, seed, resamples)
    # A percentile interval of resampled means brackets the sample mean; min/max only absorb float noise.
    ci = (min(lo, delta), max(hi, delta))
    p_value, test = exact.sign_flip_test()
    return PairedResult(delta, ci, _r(p_value), test, n)


def _bootstrap_ci(diffs: Sequence[float], seed: int, resamples: int) -> tuple[float, float]:
    import numpy as np

    rng = np.random.default_rng(seed)
    data = np.asarray(diffs, dtype=float)
    n = len(data)
    rows = max(1, _BOOTSTRAP_BLOCK // n)
    blocks = []
    for start in range(0, resamples, rows):
        idx = rng.integers(0, n, size=(min(rows, resamples - start), n))
        blocks.append(data[idx].mean(axis=1))
    means = np.concatenate(blocks)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return (_r(float(lo)), _r(float(hi)))


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm-Bonferroni step-down adjusted p-values (monotone, capped at 1); None stays None, uncounted."""
    present = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    if not all(0.0 <= p <= 1.0 for p, _ in present):
        raise ValueError(f"p-values must lie in [0, 1], got {list(p_values)}")
    m = len(present)
    adjusted: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(present):
        running = max(running, min(1.0, (m - rank) * p))
        # Rounding could take an unrounded p a hair below itself; an adjusted p is never below the raw one.
        adjusted[i] = max(p, _r(running))
    return adjusted


def pick_winner(
    baseline: str,
    means: Mapping[str, float | None],
    adjusted_p: Mapping[str, float | None],
    deltas: Mapping[str, float | None],
    alpha: float = 0.05,
) -> tuple[str | None, bool]:
    """Highest mean wins (a tie at the top: no winner); significant only if it beats the baseline."""
    scored = [(m, name) for name, m in means.items() if m is not None]
    if not scored:
        return None, False
    top = max(m for m, _ in scored)
    leaders = [name for m, name in scored if m == top]
    if len(leaders) > 1:
        return None, False
    winner = leaders[0]
    if winner == baseline:
        return winner, False
    p, d = adjusted_p.get(winner), deltas.get(winner)
    return winner, p is not None and p < alpha and d is not None and d > 0
