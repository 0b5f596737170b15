"""The paired test: a sign-flip permutation test on per-case differences, with Lancaster's mid-p.

Under "no difference", each case's difference is as likely to have come out negated. The p-value is
the share of the 2^m sign patterns of the m non-zero differences whose sum is farther from zero than
the observed one, plus half the share whose sum is exactly as far (the mid-p). The plain share of
"at least as far" is valid at every size but lumpy: on pass rates in thirds it rejected 2-2.5% of
A/A suites at 10-20 cases, not 5%, and so lost 10 points of power to the paired t at 10 cases x 3
repeats. The mid-p takes the lumps' middle: over suites its A/A stays at or below the level
(benchmarks/sim_stats.py: 3.9-5.1% at 10-50 cases) with the paired t's power within 3 points, and
it stays what the t-test is not, exact and sensible with a few changed cases among many (4 of 10
cases up by 1/3, the rest unchanged: the paired t says p 0.04, this 0.06). The price, said in the
README: given exactly m changed pass/fail cases its rate can reach 6-8% for some m (5 of 5 one way
give p 0.031), while averaging under the level over the suites' spread of m, as the t's does.
It is computed exactly, in integers, so:
- equal differences are equal (2/3 - 1/3 and 1/3 - 0 are the same number, never split by float noise);
- it is scale invariant: the same pattern of differences at 1, 1/3 or 0.05 gives the same p;
- pass/fail and scores take the same path: on 0/1 values it is the mid-p McNemar (sign) test.
From 20 changed cases on (or when the exact distribution would be too much work), the studentized
form takes over: the paired t statistic against Student's t with n - 1 degrees of freedom, which the
permutation distribution approaches as n grows; it is also scale invariant, and equal differences are
equal floats because they come from equal fractions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import NamedTuple

# from this many non-zero differences on, the studentized form: the mid-p and Student's t then agree
# (the same A/A and power in benchmarks/sim_stats.py at 50 cases), and the t costs nothing to compute
EXACT_BELOW = 20
# the exact distribution costs (non-zero differences) x (range of sums) table cells; above this, the t form
EXACT_WORK = 40_000_000
# up to this many non-zero differences on no small lattice (continuous scores), every pattern is listed
ENUMERATED_MAX = 16
EXACT = "sign_flip_mid_p"
STUDENTIZED = "sign_flip_t"


class TestResult(NamedTuple):
    p_value: float
    test: str


Value = float | Fraction


class ScaledDifferences(NamedTuple):
    """candidate - baseline per pair, exactly, as integers over one common denominator `scale`: the
    same numbers as Fraction(c) - Fraction(b) per pair, without a Fraction (and its gcd) per case,
    which cost most of a 10,000-case report."""

    ints: list[int]
    scale: int

    @classmethod
    def of(cls, baseline: Sequence[Value], candidate: Sequence[Value]) -> ScaledDifferences:
        if len(baseline) != len(candidate):
            raise ValueError(f"need equal lengths, got {len(baseline)} and {len(candidate)}")
        b_num, b_den = _ratios(baseline)
        c_num, c_den = _ratios(candidate)
        scale = math.lcm(1, *set(b_den), *set(c_den))
        pairs = zip(b_num, b_den, c_num, c_den, strict=True)
        ints = [cn * (scale // cd) - bn * (scale // bd) for bn, bd, cn, cd in pairs]
        return cls(ints, scale)

    @property
    def total(self) -> int:
        return sum(self.ints)

    def floats(self) -> list[float]:
        """Each difference as a float: int / int is correctly rounded, so float(Fraction) exactly."""
        scale = self.scale
        return [d / scale for d in self.ints]

    def sign_flip_test(self) -> TestResult:
        """sign_flip_test of these differences (the same p, the same test)."""
        nonzero = [d for d in self.ints if d]
        if len(nonzero) >= EXACT_BELOW:
            return TestResult(_studentized_p(self.floats()), STUDENTIZED)
        # a Fraction for the few changed cases only: with many cases and a handful changed
        # (benchmarks/README.md#in-code-stats)
        return _few_changed([Fraction(d, self.scale) for d in nonzero], self.floats)


def _ratios(values: Sequence[Value]) -> tuple[list[int], list[int]]:
    """(numerators, denominators) of the values taken exactly (a float at its exact binary value)."""
    nums, dens = [], []
    seen: dict[int, tuple[int, int]] = {}  # by identity: case values share a few Fraction objects
    for v in values:
        pair = seen.get(id(v))
        if pair is None:
            f = v if isinstance(v, Fraction) else Fraction(v)
            pair = seen[id(v)] = (f.numerator, f.denominator)
        nums.append(pair[0])
        dens.append(pair[1])
    return nums, dens


def on_a_lattice(diffs: Sequence[Fraction]) -> list[int]:
    """The non-zero differences as the smallest integers with the same ratios: scale-free, ties exact."""
    nonzero = [d for d in diffs if d]
    if not nonzero:
        return []
    common = math.lcm(*(d.denominator for d in nonzero))
    ints = [int(d * common) for d in nonzero]
    unit = math.gcd(*ints)
    return [i // unit for i in ints]


def sign_flip_test(diffs: Sequence[Fraction]) -> TestResult:
    """Two-sided p-value of "the candidate and the baseline do not differ", from paired differences."""
    if sum(1 for d in diffs if d) >= EXACT_BELOW:  # decided before the (costly) common lattice
        return TestResult(_studentized_p([float(d) for d in diffs]), STUDENTIZED)
    return _few_changed([d for d in diffs if d], lambda: [float(d) for d in diffs])


def _few_changed(nonzero: list[Fraction], floats: Callable[[], list[float]]) -> TestResult:
    """sign_flip_test of fewer than EXACT_BELOW non-zero differences: `floats` gives every
    difference (zeros too) for the studentized form, taken when the exact one is too much work."""
    ints = on_a_lattice(nonzero)
    if not ints:
        return TestResult(1.0, EXACT)  # nothing changed: no evidence either way
    magnitudes = [abs(i) for i in ints]
    span = sum(magnitudes)
    if len(ints) * (2 * span + 1) <= EXACT_WORK:
        return TestResult(_exact_p(magnitudes, abs(sum(ints))), EXACT)
    if len(ints) <= ENUMERATED_MAX:
        return TestResult(_enumerated_p(ints), EXACT)
    return TestResult(_studentized_p(floats()), STUDENTIZED)


# up to this many table cells the distribution is built in plain integers (no NumPy import: a small
# run's start-up, where NumPy alone costs a tenth of a second). The two give the same float: below
# EXACT_BELOW differences every probability is a count / 2^m, exact in a double, and so is every
# partial sum of them, whatever the order of the additions
SMALL_WORK = 20_000


def _exact_p(magnitudes: list[int], observed: int) -> float:
    """P(|sum of ±m_i| > observed) + P(|sum| == observed) / 2 with fair independent signs (the mid-p),
    by building the sum's distribution."""
    span = sum(magnitudes)
    if len(magnitudes) * (2 * span + 1) <= SMALL_WORK:
        return _exact_p_small(magnitudes, observed)
    import numpy as np

    span = sum(magnitudes)
    dist = np.zeros(2 * span + 1)
    dist[span] = 1.0  # index span + s holds P(sum == s)
    for m in sorted(magnitudes):
        shifted = np.zeros_like(dist)
        shifted[m:] += dist[:-m]
        shifted[:-m] += dist[m:]
        dist = shifted * 0.5
    offsets = np.abs(np.arange(-span, span + 1))
    beyond, at = dist[offsets > observed].sum(), dist[offsets == observed].sum()
    return min(1.0, float(beyond + at / 2))


def _exact_p_small(magnitudes: list[int], observed: int) -> float:
    """_exact_p in integers: the 2^m sign patterns beyond `observed` and half those at it, over 2^m."""
    span = sum(magnitudes)
    counts = [0] * (2 * span + 1)
    counts[span] = 1  # index span + s counts the patterns whose sum is s
    for m in sorted(magnitudes):
        shifted = [0] * len(counts)
        for i, c in enumerate(counts):
            if c:
                shifted[i - m] += c
                shifted[i + m] += c
        counts = shifted
    beyond = sum(c for i, c in enumerate(counts) if abs(i - span) > observed)
    at = sum(c for i, c in enumerate(counts) if abs(i - span) == observed)
    return min(1.0, (2 * beyond + at) / (2 << len(magnitudes)))


def _enumerated_p(ints: list[int]) -> float:
    """The same mid-p by listing all 2^m sign patterns (m <= 16) of the differences scaled to at most 1."""
    import numpy as np

    m, top = len(ints), max(abs(i) for i in ints)
    values = np.array([i / top for i in ints])
    patterns = np.arange(1 << m)[:, None] >> np.arange(m) & 1
    sums = np.abs((1 - 2 * patterns) @ values)
    observed = abs(sum(ints)) / top
    # integers scaled by one factor: sums equal in integers differ here by float rounding only
    slack = 1e-9 * m
    beyond = np.count_nonzero(sums > observed + slack)
    at = np.count_nonzero(sums >= observed - slack) - beyond
    return min(1.0, float((2 * beyond + at) / (2 << m)))


def _studentized_p(diffs: list[float]) -> float:
    n = len(diffs)
    mean = math.fsum(diffs) / n
    sd = math.sqrt(math.fsum((d - mean) ** 2 for d in diffs) / (n - 1))
    if sd == 0.0:  # every difference the same and non-zero: only the two all-same sign patterns tie
        return min(1.0, 2.0 ** -n)  # their mid-p
    from engine.stats.student_t import t_sf

    t = abs(mean) / (sd / math.sqrt(n))
    return min(1.0, 2.0 * t_sf(n - 1, t))
