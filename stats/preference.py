"""The tests of a pairwise judge's verdicts: is the candidate preferred, does the judge lean to the
response shown first.

The preference test takes the case as its unit, like every other comparison in the report: a case's
repeats share its prompt, so its verdicts lean together, and a sign test over every verdict counted
them as independent evidence (with 20 cases x 5 repeats, per-case preferences and no preference
overall, 23% of runs came out "significant" at 0.05). Each case's mean preference (wins - losses
over its usable verdicts, a tie counting 0) goes into the paired sign-flip test the comparisons
use. The position lean keeps the per-verdict test: the position is drawn anew for every verdict,
so under "no lean" each choice of A is its own fair coin."""

from __future__ import annotations

from fractions import Fraction
from math import comb
from typing import NamedTuple

from engine.stats.signflip import sign_flip_test


def binomial_two_sided(successes: int, trials: int) -> float | None:
    """Exact two-sided p of `successes` in `trials` fair coin flips (the sign test); None for none."""
    if trials == 0:
        return None
    tail = min(successes, trials - successes)
    p = 2 * sum(comb(trials, i) for i in range(tail + 1)) / 2**trials
    return float(f"{min(1.0, p):.6g}")  # six significant digits: a tiny p stays above 0


class CasePreference(NamedTuple):
    p_value: float | None  # None: no case with a win or a loss
    test: str
    preferring: int  # cases whose mean preference favours the candidate
    against: int
    even: int


def case_preference(by_case: dict[str, list[int]]) -> CasePreference:
    """The candidate against the baseline with the case as the unit: each case's mean preference
    ((wins - losses) / verdicts) into the two-sided paired sign-flip test, exactly on Fractions."""
    prefs = [Fraction(w - lo, w + t + lo) for w, t, lo in by_case.values() if w + t + lo]
    up, down = sum(1 for x in prefs if x > 0), sum(1 for x in prefs if x < 0)
    if not any(w + lo for w, _, lo in by_case.values()):
        return CasePreference(None, "none", up, down, len(prefs) - up - down)
    p, test = sign_flip_test(prefs)
    return CasePreference(float(f"{p:.6g}"), test, up, down, len(prefs) - up - down)
