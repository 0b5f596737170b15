"""Budgets as hard caps: a trial starts only when its worst-case spend fits beside what is spent and
what the trials in flight hold.

A trial's worst case: its input (the largest seen for its case, else the largest tokens-per-byte
rate seen times its prompt's size), its output (the request's `max_tokens` where the target honours
it, else the largest output seen), the largest judge spend seen; its cost from the target's price,
or the largest trial cost seen. Before any trial has ended nothing is known: one trial at a time
probes. When the worst case does not fit and nothing is in flight to free room, the run stops below
the limit and says so (BudgetExhausted.reserved).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from engine.actors.messages import TrialJob, TrialKey
from engine.events.targets import TARGETS
from engine.store.projections.run_state import SCALE, RunState


@dataclass(frozen=True, slots=True)
class Stop:
    budget: str
    limit: float
    used: float
    reserved: float


WAIT = "wait"  # trials in flight hold the room: decide again when one ends


class Reservations:
    def __init__(self, state: RunState, max_tokens: int | None, max_cost_usd: float | None) -> None:
        self.state, self.max_tokens, self.max_cost = state, max_tokens, max_cost_usd
        self.held: dict[TrialKey, tuple[int, float]] = {}
        self._sizes: dict[TrialKey, int] = {}  # prompt bytes of the trials in flight
        self._rate = 0.0  # the largest input tokens per prompt byte seen

    @property
    def active(self) -> bool:
        return self.max_tokens is not None or self.max_cost is not None

    def learn(self, job: TrialJob) -> None:
        """A trial of this job's cell ended before this process: its input rate is known too."""
        seen = self.state.tokens_in_of(job.key[:2])
        if seen:
            self._rate = max(self._rate, seen / _size(job))

    def decide(self, job: TrialJob, in_flight: int) -> Stop | str | None:
        """None: the trial may start (hold() it); WAIT; or the Stop that ends the run."""
        worst = self.worst_case(job)
        for name, limit, spent, held, need in (
            ("max_tokens", self.max_tokens, self.spent_tokens(), sum(t for t, _ in self.held.values()),
             None if worst is None else worst[0]),
            ("max_cost_usd", self.max_cost, self.spent_cost(), sum(c for _, c in self.held.values()),
             None if worst is None else worst[1]),
        ):  # fmt: skip
            if limit is None:
                continue
            if need is None:  # nothing known yet: one probe at a time
                if in_flight:
                    return WAIT
                continue
            if spent + held + need > limit:
                return WAIT if in_flight else Stop(name, limit, spent, need)
        return None

    def hold(self, job: TrialJob) -> tuple[int, float]:
        worst = self.worst_case(job) or (0, 0.0)
        self.held[job.key] = worst
        self._sizes[job.key] = _size(job)
        return worst

    def release(self, key: TrialKey) -> None:
        self.held.pop(key, None)
        size = self._sizes.pop(key, None)
        seen = self.state.tokens_in_of(key[:2])
        if size and seen:
            self._rate = max(self._rate, seen / size)

    def spent_tokens(self) -> int:
        return self.state.tokens_used + self.state.spend.lost_tokens

    def spent_cost(self) -> float:
        return (self.state.cost_used + self.state.spend.lost_cost) / SCALE

    def worst_case(self, job: TrialJob) -> tuple[int, float] | None:
        spend = self.state.spend
        if not spend.max_trial_tokens and not spend.max_cost and not self._rate:
            return None
        tokens_in = self.state.tokens_in_of(job.key[:2]) or math.ceil(self._rate * _size(job))
        bound = job.request.params.get("max_tokens")
        honoured = TARGETS.of(job.target).honours_max_tokens and isinstance(bound, int)
        tokens_out = bound if honoured else spend.max_tokens_out
        tokens = (
            max(tokens_in + tokens_out, 0 if honoured else spend.max_trial_tokens) + spend.max_judge_tokens
        )
        price = job.target.price
        cost = max(price.cost(tokens_in, tokens_out) if price is not None else 0.0, spend.max_cost / SCALE)
        return tokens, cost


def _size(job: TrialJob) -> int:
    """What the subject is sent, in bytes: every real tokenizer's count grows with it."""
    request = job.request
    return max(1, sum(len(t.encode()) for t in (request.prompt, request.system or "", request.context or "")))
