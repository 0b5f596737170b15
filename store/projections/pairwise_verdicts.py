"""Pairwise judges' verdicts folded per (grader, candidate), and their report: wins, ties and
losses, whether the candidate is preferred, and how far the judge leans to the response shown first.

The preference test takes the case as its unit, like every other comparison in the report: a case's
repeats share its prompt, so its verdicts lean together, and a sign test over every verdict counted
them as independent evidence (with 20 cases x 5 repeats, per-case preferences and no preference
overall, 23% of runs came out "significant" at 0.05). Each case's mean preference (wins - losses
over its usable verdicts, a tie counting 0) goes into the paired sign-flip test the comparisons
use. The position lean keeps the per-verdict test: the position is drawn anew for every verdict,
so under "no lean" each choice of A is its own fair coin."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from math import comb
from typing import NamedTuple

from engine.events import kinds as k
from engine.events.report import PairwiseReport
from engine.store.signflip import sign_flip_test


@dataclass(slots=True)
class PairTally:
    baseline: str
    wins: int = 0
    ties: int = 0
    losses: int = 0
    undecided: int = 0
    picked_a: int = 0  # non-tie answers that chose the response shown first
    picked_b: int = 0
    wins_as_a: int = 0  # the candidate shown first: its wins, and the non-tie answers
    decided_as_a: int = 0
    wins_as_b: int = 0
    decided_as_b: int = 0
    tokens: int = 0
    seen: set[tuple[str, int]] = field(default_factory=set)  # (case, repeat): a verdict counts once
    by_case: dict[str, list[int]] = field(default_factory=dict)  # case -> [wins, ties, losses]

    def add(self, e: k.PairwiseJudged) -> None:
        if (e.case, e.repeat) in self.seen:
            return
        self.seen.add((e.case, e.repeat))
        self.tokens += e.tokens
        if e.winner == "":
            self.undecided += 1
            return
        counts = self.by_case.setdefault(e.case, [0, 0, 0])
        if e.winner == "tie":
            self.ties += 1
            counts[1] += 1
        else:
            won = e.winner == "candidate"
            counts[0 if won else 2] += 1
            self._decided(won, e.candidate_position == "A")

    def _decided(self, won: bool, shown_first: bool) -> None:
        self.wins, self.losses = self.wins + won, self.losses + (not won)
        chose_a = won == shown_first  # the judge chose A: the candidate won from A, or lost from B
        self.picked_a, self.picked_b = self.picked_a + chose_a, self.picked_b + (not chose_a)
        if shown_first:
            self.wins_as_a, self.decided_as_a = self.wins_as_a + won, self.decided_as_a + 1
        else:
            self.wins_as_b, self.decided_as_b = self.wins_as_b + won, self.decided_as_b + 1


def add_verdict(tallies: dict[tuple[str, str], PairTally], e: k.PairwiseJudged) -> None:
    key = (e.grader, e.variant)
    found = tallies.get(key)
    if found is None:
        found = tallies[key] = PairTally(e.baseline)
    found.add(e)


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


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 6) if whole else None


def pairwise_reports(tallies: dict[tuple[str, str], PairTally], alpha: float) -> list[PairwiseReport]:
    out = []
    for (grader, variant), t in sorted(tallies.items()):
        pref = case_preference(t.by_case)
        p = pref.p_value
        out.append(PairwiseReport(
            grader=grader, variant=variant, baseline=t.baseline,
            judged=t.wins + t.ties + t.losses + t.undecided, wins=t.wins, ties=t.ties, losses=t.losses,
            undecided=t.undecided, win_rate=_rate(t.wins, t.wins + t.losses), p_value=p,
            significant=p is not None and p < alpha, picked_a=t.picked_a, picked_b=t.picked_b,
            position_a_rate=_rate(t.picked_a, t.picked_a + t.picked_b),
            position_p_value=binomial_two_sided(t.picked_a, t.picked_a + t.picked_b),
            win_rate_as_a=_rate(t.wins_as_a, t.decided_as_a),
            win_rate_as_b=_rate(t.wins_as_b, t.decided_as_b),
            judge_tokens=t.tokens, test=pref.test, cases=pref.preferring + pref.against + pref.even,
            cases_preferring=pref.preferring, cases_against=pref.against, cases_even=pref.even,
        ))  # fmt: skip
    return out
