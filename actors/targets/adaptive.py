"""Adaptive per-target concurrency: back off when the server throttles, creep back up when it copes.

Additive increase, multiplicative decrease (as TCP does): a throttled answer
halves the number of calls allowed in flight to that target; every `grow_after`
successes in a row allow one more, up to the ceiling.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import trio


class AdaptiveLimit:
    def __init__(self, ceiling: int, grow_after: int = 20) -> None:
        self.ceiling = max(1, ceiling)
        self.limit = self.ceiling
        self.grow_after = grow_after
        self._in_flight = 0
        self._streak = 0
        self._changed = trio.Condition()

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        async with self._changed:
            while self._in_flight >= self.limit:
                await self._changed.wait()
            self._in_flight += 1
        try:
            yield
        finally:
            self._in_flight -= 1
            await self._notify()

    def on_throttle(self) -> None:
        self.limit = max(1, self.limit // 2)
        self._streak = 0

    def on_success(self) -> None:
        self._streak += 1
        if self._streak >= self.grow_after and self.limit < self.ceiling:
            self.limit += 1
            self._streak = 0

    async def _notify(self) -> None:
        with trio.CancelScope(shield=True):
            async with self._changed:
                self._changed.notify_all()
