"""Adaptive per-target concurrency: back off when the server throttles, creep back up when it copes.

Additive increase, multiplicative decrease (as TCP does): a throttled answer
halves the number of calls allowed in flight to that target; every `grow_after`
successes in a row allow one more, up to the ceiling. A trio.CapacityLimiter
does the counting (its total can change while calls are in flight).
"""

from __future__ import annotations

from dataclasses import dataclass

import trio


@dataclass(frozen=True)
class LimitStatistics:
    limit: int  # calls allowed in flight now
    ceiling: int
    in_use: int
    waiting: int
    throttled: int  # throttled answers seen


class AdaptiveLimit:
    def __init__(self, ceiling: int, grow_after: int = 20) -> None:
        self.ceiling = max(1, ceiling)
        self.grow_after = grow_after
        self._limiter = trio.CapacityLimiter(self.ceiling)
        self._streak = 0
        self._throttled = 0

    def statistics(self) -> LimitStatistics:
        inner = self._limiter.statistics()
        in_use, waiting = inner.borrowed_tokens, inner.tasks_waiting
        return LimitStatistics(self.limit, self.ceiling, in_use, waiting, self._throttled)

    @property
    def limit(self) -> int:
        return int(self._limiter.total_tokens)

    def slot(self) -> trio.CapacityLimiter:
        """`async with limit.slot():` around one call."""
        return self._limiter

    def on_throttle(self) -> None:
        self._limiter.total_tokens = max(1, self.limit // 2)
        self._streak = 0
        self._throttled += 1

    def on_success(self) -> None:
        self._streak += 1
        if self._streak >= self.grow_after and self.limit < self.ceiling:
            self._limiter.total_tokens = self.limit + 1
            self._streak = 0
