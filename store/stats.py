"""Pure, deterministic statistics for reports (numpy/scipy imported lazily: they are slow to import).

Results are rounded to 12 significant digits so that a report rebuilt from the
log on another run of the same code renders to the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import NamedTuple

Z95 = 1.959963984540054


def _r(x: float) -> float:
    return float(f"{x:.12g}")


def mean(values: Sequence[float]) -> float | None:
    return _r(math.fsum(values) / len(values)) if values else None


def mean_ci95(values: Sequence[float]) -> tuple[float, float] | None:
    """Student-t 95% interval of the mean."""
    n = len(values)
    if n == 0:
        return None
    m = math.fsum(values) / n
    if n == 1:
        return (_r(m), _r(m))
    from scipy.stats import t

    sd = math.sqrt(math.fsum((v - m) ** 2 for v in values) / (n - 1))
    half = float(t.ppf(0.975, n - 1)) * sd / math.sqrt(n)
    return (_r(m - half), _r(m + half))


def lower_ci_bound(values: Sequence[float]) -> float | None:
    ci = mean_ci95(values)
    return None if ci is None else ci[0]


def wilson_ci95(passes: int, n: int) -> tuple[float, float] | None:
    if n == 0:
        return None
    p = passes / n
    denom = 1 + Z95**2 / n
    centre = (p + Z95**2 / (2 * n)) / denom
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n)) / denom
    lo = 0.0 if passes == 0 else max(0.0, centre - half)  # exact ends: no 1e-17 left by rounding
    hi = 1.0 if passes == n else min(1.0, centre + half)
    return (_r(lo), _r(hi))


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k (Chen et al. 2021): 1 - C(n-c, k) / C(n, k)."""
    if n == 0:
        return 0.0
    k = min(k, n)
    if n - c < k:
        return 1.0
    return _r(1.0 - math.comb(n - c, k) / math.comb(n, k))


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k: the chance that k attempts all pass, C(c, k) / C(n, k)."""
    if n == 0:
        return 0.0
    k = min(k, n)
    return _r(math.comb(c, k) / math.comb(n, k))


class PairedResult(NamedTuple):
    delta: float | None
    ci95: tuple[float, float] | None
    p_value: float | None
    test: str
    n_pairs: int


def paired_comparison(
    baseline: Sequence[float], candidate: Sequence[float], *, binary: bool, seed: int, resamples: int = 2000
) -> PairedResult:
    if len(baseline) != len(candidate):
        raise ValueError("paired comparison needs one baseline value per candidate value")
    n = len(baseline)
    if n == 0:
        return PairedResult(None, None, None, "none", 0)
    diffs = [c - b for b, c in zip(baseline, candidate, strict=True)]
    delta = _r(math.fsum(diffs) / n)
    ci = _bootstrap_ci(diffs, seed, resamples)
    if binary:
        return PairedResult(delta, ci, _mcnemar_exact(baseline, candidate), "mcnemar_exact", n)
    p, test = _wilcoxon(diffs)
    return PairedResult(delta, ci, p, test, n)


def _bootstrap_ci(diffs: Sequence[float], seed: int, resamples: int) -> tuple[float, float]:
    import numpy as np

    rng = np.random.default_rng(seed)
    data = np.asarray(diffs, dtype=float)
    idx = rng.integers(0, len(data), size=(resamples, len(data)))
    means = data[idx].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return (_r(float(lo)), _r(float(hi)))


def _mcnemar_exact(baseline: Sequence[float], candidate: Sequence[float]) -> float:
    from scipy.stats import binomtest

    gained = sum(1 for b, c in zip(baseline, candidate, strict=True) if c > b)
    lost = sum(1 for b, c in zip(baseline, candidate, strict=True) if c < b)
    if gained + lost == 0:
        return 1.0
    return _r(float(binomtest(gained, gained + lost, 0.5).pvalue))


def _wilcoxon(diffs: Sequence[float]) -> tuple[float, str]:
    if all(d == 0 for d in diffs):
        return 1.0, "wilcoxon"
    from scipy.stats import binomtest, wilcoxon

    try:
        return _r(float(wilcoxon(diffs, zero_method="zsplit").pvalue)), "wilcoxon"
    except ValueError:
        positive = sum(1 for d in diffs if d > 0)
        nonzero = sum(1 for d in diffs if d != 0)
        return _r(float(binomtest(positive, nonzero, 0.5).pvalue)), "sign"


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm-Bonferroni step-down adjusted p-values (monotone, capped at 1)."""
    present = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    m = len(present)
    adjusted: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(present):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[i] = max(p, _r(running))  # rounding must never take it below the raw p
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
