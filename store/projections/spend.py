"""What budgets reserve and what a crash leaves spent: part of the run fold.

Each trial's start records the spend reserved for it (its worst case); a trial still in flight
when its process died may have been served, so on the next start its reservation counts as
spent, and it counts as a trial. The largest spends seen so far are what a reservation is made of
when a request does not bound its own spend.
"""

from __future__ import annotations

from dataclasses import dataclass, field

Key = tuple[str, str, int]


@dataclass(slots=True)
class Spend:
    reserved: dict[Key, tuple[int, int]] = field(default_factory=dict)  # in flight: (tokens, fixed cost)
    lost_trials: int = 0  # in flight when the run's process died: maybe served, so counted
    lost_tokens: int = 0
    lost_cost: int = 0  # fixed point dollars
    # the largest spend of one trial seen so far (cost in fixed point)
    max_tokens_out: int = 0
    max_trial_tokens: int = 0
    max_judge_tokens: int = 0
    max_cost: int = 0

    def started(self, key: Key, tokens: int, cost: int) -> None:
        if tokens or cost:
            self.reserved[key] = (tokens, cost)

    def ended(self, key: Key, tokens_in: int, tokens_out: int, cost: int) -> None:
        """A trial's spend (each cell keeps its own largest input: Cell.tokens_in)."""
        self.reserved.pop(key, None)
        self.max_tokens_out = max(self.max_tokens_out, tokens_out)
        self.max_trial_tokens = max(self.max_trial_tokens, tokens_in + tokens_out)
        self.max_cost = max(self.max_cost, cost)

    def judged(self, tokens: int) -> None:
        self.max_judge_tokens = max(self.max_judge_tokens, tokens)

    def lose_in_flight(self, in_flight: set[Key]) -> None:
        """The process that ran these trials is gone: each may have been served."""
        for key in in_flight:
            tokens, cost = self.reserved.get(key, (0, 0))
            self.lost_trials += 1
            self.lost_tokens += tokens
            self.lost_cost += cost
        self.reserved.clear()
