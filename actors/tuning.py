"""Variation strategies for tuning sessions: grid, random, neighborhood.

Each call proposes one parameter changed from the current best configuration.
Visited variations are never proposed again. Random and neighborhood are seeded,
so a session restarted from its log re-derives the same sequence.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import NamedTuple

from engine.events.spec import ParameterRange, TuneSpec

MAX_REJECTIONS = 1000
CONTINUOUS_GRID_POINTS = 10


class Variation(NamedTuple):
    parameter: str
    value: float


def quantize(p: ParameterRange, value: float) -> float:
    """Clamp to [min, max] and snap to the nearest step (no floating-point drift)."""
    value = min(max(value, p.min), p.max)
    if p.step:
        value = p.min + round((value - p.min) / p.step) * p.step
        value = min(max(value, p.min), p.max)
    return float(round(value)) if p.integer else round(value, 10)


def grid_points(p: ParameterRange) -> list[float]:
    step = p.step or (p.max - p.min) / CONTINUOUS_GRID_POINTS
    if step <= 0:
        return [quantize(p, p.min)]
    count = int(round((p.max - p.min) / step))
    return sorted({quantize(p, p.min + i * step) for i in range(count + 1)})


def defaults(spec: TuneSpec) -> dict[str, float]:
    return {p.name: quantize(p, p.default) for p in spec.parameters}


@dataclass
class VariationGenerator:
    spec: TuneSpec
    seed: int
    visited: set[Variation] = field(default_factory=set)
    retried: set[Variation] = field(default_factory=set)  # neighbourhood: proposed a second time

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        # only a grid sweep lists its points; random and neighborhood search sample them
        swept = self.spec.parameters if self.spec.strategy == "grid" else []
        self._grid = [Variation(p.name, v) for p in swept for v in grid_points(p)]
        self._grid_pos = 0

    def next(self, best: dict[str, float]) -> Variation | None:
        strategy = self.spec.strategy
        found = self._next_grid(best) if strategy == "grid" else self._next_sampled(best, strategy)
        if found is not None:
            self.visited.add(found)
        return found

    def _next_grid(self, best: dict[str, float]) -> Variation | None:
        # sweep one parameter through all its points before the next: one change at a time
        while self._grid_pos < len(self._grid):
            candidate = self._grid[self._grid_pos]
            self._grid_pos += 1
            if candidate not in self.visited and best.get(candidate.parameter) != candidate.value:
                return candidate
        return None

    def _next_sampled(self, best: dict[str, float], strategy: str) -> Variation | None:
        found = self._sample(best, strategy, self.visited)
        if found is None and strategy == "neighborhood":
            # every neighbour tried: give each rejected one a second chance (fresh trials), so one
            # unlucky rejection does not leave the search stuck beside a better value
            found = self._sample(best, strategy, self.retried)
            if found is not None:
                self.retried.add(found)
        return found

    def _sample(self, best: dict[str, float], strategy: str, tried: set[Variation]) -> Variation | None:
        for _ in range(MAX_REJECTIONS):
            p = self.rng.choice(self.spec.parameters)
            if strategy == "random":
                value = quantize(p, self.rng.uniform(p.min, p.max))
            else:
                step = p.step or (p.max - p.min) / CONTINUOUS_GRID_POINTS
                offset = self.rng.uniform(-self.spec.radius, self.spec.radius) * step
                value = quantize(p, best[p.name] + offset)
            candidate = Variation(p.name, value)
            if candidate not in tried and best.get(p.name) != value:
                return candidate
        return None  # the space is considered exhausted
