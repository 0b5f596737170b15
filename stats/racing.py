"""Racing variants: after each round of cases, drop the variants clearly worse than the leader.

Error control. Round r of R compares each surviving variant with the current leader (the paired test
over the cases the two share, one-sided: "the leader is better") and drops it when
p < alpha / (R x (K - 1)), K the variants at the start. The leader is chosen from the data, so the
bound is taken over every variant that could have led: the true best is dropped only if some other
variant beats it at that threshold in some round, which has probability at most
R x (K - 1) x alpha / (R x (K - 1)) = alpha (Bonferroni over rounds and rivals), however the rounds
went. With every variant equal, declaring one best needs K - 1 such false drops, so it happens less
often still (`benchmarks/sim_race.py` measures both); but some variant is dropped far more often
(the leader is the luckiest of K): `protect = "any"` bounds that too, with alpha over rounds and
every ordered pair, K x (K - 1).

Objectives: `score` (per-case mean score) and `pass_rate` (per-case share of passing repeats), higher
is better, tested with the sign-flip test (stats.signflip); `cost_per_pass` (total cost over total
passes), lower is better, tested with a paired t statistic on the ratio's linearisation (delta method)
over cases.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import NamedTuple

from engine.stats.inference import mean_ci95
from engine.stats.signflip import EXACT_BELOW, sign_flip_test
from engine.stats.student_t import t_ppf, t_sf


class CaseCost(NamedTuple):
    cost: float
    passes: float  # passing repeats (as a share, or a count: only ratios of sums are used)


PerCase = Mapping[str, Fraction] | Mapping[str, CaseCost]


class Drop(NamedTuple):
    variant: str
    lost_to: str
    delta: float  # the leader's advantage on the objective (> 0)
    p_value: float  # one-sided


class Standing(NamedTuple):
    variant: str
    mean: float
    lo: float | None
    hi: float | None
    cases: int


class RoundOutcome(NamedTuple):
    leader: str
    drops: list[Drop]
    standings: list[Standing]
    equivalent: bool  # every other survivor within the margin of the leader


def race_threshold(
    alpha: float, rounds: int, variants: int, protect: str = "best", sizes: Sequence[int] = ()
) -> float:
    """The one-sided level a drop needs. "best": alpha over rounds x rivals of the true best, so it is
    dropped with probability at most alpha. "any": alpha over rounds x ordered pairs (the leader is
    chosen from the data, so any variant may beat any other), so no variant as good as the best is
    dropped with probability more than alpha: with all variants equal, none is dropped.

    `sizes`, the cases each round has run (score and pass-rate races): a round too small for the
    sign-flip test ever to reach the threshold (its smallest p, all n cases one way, is 2^-(n+1))
    can drop nothing, so it is not charged. The rounds charged are the fewest c for which at most c
    rounds could reach alpha / (c x pairs): fixed by the design, not the data, so Bonferroni holds.
    A 20-case suite in 8 rounds then spends alpha on the 5 rounds that can act, not on all 8."""
    pairs = max(1, variants - 1) * (max(1, variants) if protect == "any" else 1)
    if not sizes:
        return alpha / (rounds * pairs)
    for charged in range(1, rounds + 1):
        threshold = alpha / (charged * pairs)
        if sum(1 for n in sizes if smallest_p(n) < threshold) <= charged:
            return threshold
    return alpha / (rounds * pairs)


def smallest_p(cases: int) -> float:
    """The smallest one-sided p the sign-flip test gives on `cases` cases (every one changed, one
    way): its mid-p below EXACT_BELOW changed cases; beyond, a studentized statistic, unbounded."""
    return 2.0 ** -(cases + 1) if cases < EXACT_BELOW else 0.0


def decide_round(
    values: Mapping[str, PerCase], survivors: Sequence[str], threshold: float, margin: float
) -> RoundOutcome:
    """The round's leader, the survivors it drops, and whether the rest are within `margin` of it.

    The standings are over the cases every survivor with a value has (a variant whose every trial
    errored has none: it ranks last and cannot hold the others back); each test pairs the leader
    with one rival over the cases those two share."""
    measured = [v for v in survivors if values[v]]
    common = sorted(set.intersection(*(set(values[v]) for v in measured))) if measured else []
    standings = [_standing(v, [values[v][c] for c in common if c in values[v]]) for v in survivors]
    ranked = sorted(standings, key=lambda s: (not values[s.variant], -s.mean, survivors.index(s.variant)))
    leader = ranked[0].variant
    drops: list[Drop] = []
    within = bool(margin) and len(common) >= 2
    for other in ranked[1:]:
        shared = sorted(set(values[leader]) & set(values[other.variant]))
        delta, p_value, half = _paired(values[leader], values[other.variant], shared, threshold)
        one_sided = p_value / 2 if delta > 0 else 1.0  # only "the leader is better" drops a variant
        if one_sided < threshold:
            drops.append(Drop(other.variant, leader, delta, one_sided))
        elif half is None or abs(delta) + half >= margin:
            within = False
    return RoundOutcome(leader, drops, standings, within and len(drops) < len(ranked) - 1)


def _standing(variant: str, values: list[Fraction] | list[CaseCost]) -> Standing:
    if values and isinstance(values[0], CaseCost):
        cost = math.fsum(v.cost for v in values)  # type: ignore[union-attr]
        passes = math.fsum(v.passes for v in values)  # type: ignore[union-attr]
        ratio = cost / passes if passes else math.inf
        return Standing(variant, -ratio, None, None, len(values))  # negated: higher is better
    floats = [float(v) for v in values]  # type: ignore[arg-type]
    interval = mean_ci95(floats)
    average = math.fsum(floats) / len(floats) if floats else 0.0
    return Standing(variant, average, *(interval or (None, None)), len(values))


def _paired(
    leader: PerCase, other: PerCase, common: list[str], threshold: float
) -> tuple[float, float, float | None]:
    """(leader's advantage, two-sided p, half-width of its interval at 1 - threshold)."""
    if not common:
        return 0.0, 1.0, None
    if isinstance(leader[common[0]], CaseCost):
        return _ratio_paired([leader[c] for c in common], [other[c] for c in common], threshold)  # type: ignore[misc]
    diffs = [Fraction(leader[c]) - Fraction(other[c]) for c in common]  # type: ignore[arg-type]
    delta = float(sum(diffs) / len(diffs))
    return delta, sign_flip_test(diffs).p_value, _half_width([float(d) for d in diffs], threshold)


def _ratio_paired(
    a: list[CaseCost], b: list[CaseCost], threshold: float
) -> tuple[float, float, float | None]:
    n = len(a)
    pa, pb = math.fsum(x.passes for x in a) / n, math.fsum(x.passes for x in b) / n
    if pa == 0 or pb == 0:  # no passes: cost per pass is infinite; only the other's passes decide
        return (math.inf if pb == 0 and pa > 0 else 0.0), (0.0 if pb == 0 and pa > 0 else 1.0), None
    ra = math.fsum(x.cost for x in a) / n / pa
    rb = math.fsum(x.cost for x in b) / n / pb
    # each case's influence on its variant's ratio; their paired difference carries the variance
    diffs = [(y.cost - rb * y.passes) / pb - (x.cost - ra * x.passes) / pa for x, y in zip(a, b, strict=True)]
    delta = rb - ra  # the leader is cheaper per pass by this much
    half = _half_width(diffs, threshold)
    if not half:  # every case moved the ratio alike: no spread to test against
        return delta, (1.0 if delta == 0 else 0.0), half
    se = half / _t_quantile(n - 1, threshold)
    return delta, min(1.0, 2.0 * t_sf(n - 1, abs(delta) / se)), half


def _half_width(diffs: list[float], threshold: float) -> float | None:
    n = len(diffs)
    if n < 2:
        return None
    average = math.fsum(diffs) / n
    sd = math.sqrt(math.fsum((d - average) ** 2 for d in diffs) / (n - 1))
    if sd == 0.0:
        return 0.0
    return _t_quantile(n - 1, threshold) * sd / math.sqrt(n)


def _t_quantile(df: int, threshold: float) -> float:
    return t_ppf(df, 1.0 - threshold / 2.0)
