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
    tokens_in: dict[tuple[str, str], int] = field(default_factory=dict)  # per cell: the largest seen

    def started(self, key: Key, tokens: int, cost: int) -> None:
        if tokens or cost:
            self.reserved[key] = (tokens, cost)

    def ended(
        self, key: Key, tokens_in: int, tokens_out: int, cost: int, cell: tuple[str, str] | None = None
    ) -> None:
        """`cell`: key[:2] as a tuple the caller keeps already (its state's cell key): a cell's first
        spend stores it, where a new tuple per cell was ~64 bytes more (13 MiB at 200,000 cells)."""
        self.reserved.pop(key, None)
        cell = key[:2] if cell is None else cell
        self.tokens_in[cell] = max(self.tokens_in.get(cell, 0), tokens_in)  # type: ignore[index]
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
