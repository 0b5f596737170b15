"""Pairwise judges' verdicts folded per (grader, candidate), and their report: wins, ties and
losses with an exact sign test, and how far the judge leans to the response shown first."""

from __future__ import annotations

from dataclasses import dataclass, field
from math import comb

from engine.events import kinds as k
from engine.events.report import PairwiseReport


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

    def add(self, e: k.PairwiseJudged) -> None:
        if (e.case, e.repeat) in self.seen:
            return
        self.seen.add((e.case, e.repeat))
        self.tokens += e.tokens
        if e.winner == "":
            self.undecided += 1
        elif e.winner == "tie":
            self.ties += 1
        else:
            self._decided(e.winner == "candidate", e.candidate_position == "A")

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


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 6) if whole else None


def pairwise_reports(tallies: dict[tuple[str, str], PairTally], alpha: float) -> list[PairwiseReport]:
    out = []
    for (grader, variant), t in sorted(tallies.items()):
        p = binomial_two_sided(t.wins, t.wins + t.losses)
        out.append(PairwiseReport(
            grader=grader, variant=variant, baseline=t.baseline,
            judged=t.wins + t.ties + t.losses + t.undecided, wins=t.wins, ties=t.ties, losses=t.losses,
            undecided=t.undecided, win_rate=_rate(t.wins, t.wins + t.losses), p_value=p,
            significant=p is not None and p < alpha, picked_a=t.picked_a, picked_b=t.picked_b,
            position_a_rate=_rate(t.picked_a, t.picked_a + t.picked_b),
            position_p_value=binomial_two_sided(t.picked_a, t.picked_a + t.picked_b),
            win_rate_as_a=_rate(t.wins_as_a, t.decided_as_a),
            win_rate_as_b=_rate(t.wins_as_b, t.decided_as_b),
            judge_tokens=t.tokens,
        ))  # fmt: skip
    return out
