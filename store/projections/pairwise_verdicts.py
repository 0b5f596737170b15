"""Pairwise judges' verdicts folded per (grader, candidate), and their report: wins, ties and
losses, whether the candidate is preferred, and how far the judge leans to the response shown first
(the tests themselves: stats/preference.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.events import kinds as k
from engine.events.report import PairwiseReport
from engine.stats.preference import binomial_two_sided, case_preference


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
    reused_tokens: int = 0  # of tokens, those of verdicts reused from earlier runs ([reuse]): not spent
    seen: set[tuple[str, int]] = field(default_factory=set)  # (case, repeat): a verdict counts once
    by_case: dict[str, list[int]] = field(default_factory=dict)  # case -> [wins, ties, losses]

    def add(self, e: k.PairwiseJudged) -> None:
        if (e.case, e.repeat) in self.seen:
            return
        self.seen.add((e.case, e.repeat))
        self.tokens += e.tokens
        self.reused_tokens += e.tokens if e.reused_from else 0
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
