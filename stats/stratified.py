"""The error-rate row's test: an exact permutation test of trial counts stratified by case, with mid-p.

Errors are sparse and clustered: most cases never err, a few err often. The sign-flip test on per-case
rates (signflip.py) sees each changed case as one sign, so with a handful of changed cases its
distribution is a few lumps and it rarely rejects (0.9% of A/A suites at 10 cases x 3 repeats, not 5%),
losing power exactly where suites are small. Here the unit is the trial within its case: under "no
difference", a case's repeats are independent draws of the same case in either run (the assumption the
per-case rule's Fisher test makes too), so given how many of a case's finished trials errored, how many
of those fell in the candidate's is hypergeometric. The statistic is the candidate's errored trials
summed over the cases (Mantel-Haenszel's), its exact distribution the convolution of the cases'; the
p-value is two-sided with Lancaster's mid-p, as the sign-flip test's. A case where no trial or every
trial errored in both runs says nothing and is left out. From EXACT_CASES informative cases on, the
normal approximation (the Cochran-Mantel-Haenszel test) is used: with that many it is exact enough and
the convolution would cost more than the report (so too past EXACT_SPAN values of the statistic).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

EXACT_CASES = 400
EXACT_SPAN = 20_000  # nor past this many values of the statistic (cases with hundreds of repeats)


def stratified_mid_p(cases: Iterable[tuple[int, int, int, int]]) -> float | None:
    """p of "the candidate errs as often as the baseline, case by case" from each case's (baseline
    errored, baseline finished, candidate errored, candidate finished); 1.0 when no case could tell
    (none errored, or all did, in both), None without a case both runs finished."""
    paired = [(b_bad, b_n, c_bad, c_n) for b_bad, b_n, c_bad, c_n in cases if b_n > 0 and c_n > 0]
    if not paired:
        return None
    strata = [(b + c, b_n + c_n, c_n, c) for b, b_n, c, c_n in paired if 0 < b + c < b_n + c_n]
    if not strata:
        return 1.0
    spans = [min(drawn, bad) - max(0, drawn - (n - bad)) + 1 for bad, n, drawn, _ in strata]
    if len(strata) >= EXACT_CASES or sum(spans) > EXACT_SPAN:
        return _normal_p(strata)
    import numpy as np  # only when computing: the statistics import without it (tests/test_layering.py)

    pmf, low, observed = np.ones(1), 0, 0
    for bad, n, drawn, seen in strata:
        first, total = max(0, drawn - (n - bad)), math.comb(n, drawn)
        last = min(drawn, bad)
        # int / int divides exactly rounded however large the counts (no float overflow at many repeats)
        chances = [math.comb(bad, x) * math.comb(n - bad, drawn - x) / total for x in range(first, last + 1)]
        pmf = np.convolve(pmf, np.array(chances))
        low, observed = low + first, observed + seen
    at = observed - low
    below, here, above = float(pmf[:at].sum()), float(pmf[at]), float(pmf[at + 1 :].sum())
    return min(1.0, 2 * min(below, above) + here)


def _normal_p(strata: list[tuple[int, int, int, int]]) -> float:
    """The two-sided Cochran-Mantel-Haenszel p without continuity correction (the mid-p's analogue)."""
    expected = variance = observed = 0.0
    for bad, n, drawn, seen in strata:
        expected += drawn * bad / n
        variance += drawn * bad * (n - bad) * (n - drawn) / (n * n * (n - 1))
        observed += seen
    if variance <= 0:
        return 1.0
    return math.erfc(abs(observed - expected) / math.sqrt(2 * variance))
