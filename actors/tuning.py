"""Variation strategies for tuning sessions: grid, random, neighborhood, optuna.

Each call proposes one parameter changed from the current best configuration. A configuration
tried in this session is never proposed again; one an earlier session of the same experiment
tried (`earlier`) only once nothing untried is left. Random, neighborhood and optuna are seeded,
so a session restarted from its log re-derives the same sequence (optuna's sampler learns only from
the scores the log holds, fed back in the log's order by `observe`).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

from engine.actors.search_space import (
    Config,
    config_of,
    defaults,
    grid_points,
    nearest_first,
    neighbours,
    quantize,
)
from engine.actors.tpe import Observation, tpe_variations
from engine.events.spec import ParameterRange, TuneSpec

__all__ = ["Variation", "VariationGenerator", "defaults", "grid_points", "quantize"]

MAX_REJECTIONS = 1000
Best = dict[str, float]
Fresh = Callable[[Best, "Variation"], bool]  # may this change of the best be proposed now?


class Variation(NamedTuple):
    parameter: str
    value: float


@dataclass
class VariationGenerator:
    spec: TuneSpec
    seed: int
    earlier: frozenset[Config] = frozenset()  # configurations earlier sessions evaluated
    tried: set[Config] = field(default_factory=set)
    retried: set[Config] = field(default_factory=set)  # neighbourhood: proposed a second time
    values: set[Variation] = field(default_factory=set)  # each parameter's values tried, in any context
    observed: list[Observation] = field(default_factory=list)  # (configuration, mean score), for optuna
    # the direction (+1/-1) of each parameter's last accepted step, and the parameter of the last one:
    # an improvement is followed onward first, as a person tuning by hand would
    heading: dict[str, int] = field(default_factory=dict)
    leading: str | None = None

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        # only a grid sweep lists its points; random and neighborhood search sample them
        swept = self.spec.parameters if self.spec.strategy == "grid" else []
        self._grid = {p.name: grid_points(p) for p in swept}

    def mark(self, best: Best, variation: Variation | None = None) -> None:
        """Record a configuration as evaluated in this session (the baseline, a logged decision)."""
        self.tried.add(config_of(best, *variation) if variation else config_of(best))
        self.values.update([variation] if variation else (Variation(*item) for item in best.items()))

    def observe(self, best: Best, variation: Variation, best_score: float, score: float) -> None:
        """A decision's measurements: the best's configuration and score, the candidate's."""
        self.observed += [(dict(best), best_score), ({**best, variation.parameter: variation.value}, score)]

    def accepted(self, before: Best, variation: Variation) -> None:
        """An accepted step from the best `before`: its parameter and direction are tried first next."""
        step = variation.value - before[variation.parameter]
        if step:
            self.heading[variation.parameter] = 1 if step > 0 else -1
        self.leading = variation.parameter

    def next(self, best: Best) -> Variation | None:
        for fresh, second_chance in self._passes():
            found = self._propose(best, fresh)
            if found is not None:
                key = config_of(best, *found)
                (self.retried if second_chance else self.tried).add(key)
                self.values.add(found)
                return found
        return None

    def _passes(self) -> Iterator[tuple[Fresh, bool]]:
        tried, earlier, values, retried = self.tried, self.earlier, self.values, self.retried

        def untried(best: Best, v: Variation) -> bool:
            key = config_of(best, *v)
            return key not in tried and key not in earlier

        # first a value not yet tried for its parameter in any configuration (the one-parameter
        # sweep); then one tried before the best changed elsewhere (a new configuration now); then
        # one only earlier sessions tried (fresh trials now)
        if self.spec.strategy != "optuna":  # the sampler chooses where to look: no sweep first
            yield (lambda best, v: v not in values and untried(best, v)), False
        yield untried, False
        if earlier:
            yield (lambda best, v: config_of(best, *v) not in tried), False
        if self.spec.strategy == "neighborhood":
            # every neighbour tried: give each rejected one a second chance (fresh trials), so one
            # unlucky rejection does not leave the search stuck beside a better value
            yield (lambda best, v: config_of(best, *v) not in retried), True

    def _propose(self, best: Best, fresh: Fresh) -> Variation | None:
        strategy = self.spec.strategy
        if strategy == "grid":
            return self._next_grid(best, fresh)
        if strategy == "neighborhood":
            return self._next_neighbour(best, fresh)
        if strategy == "optuna":
            return self._next_optuna(best, fresh)
        return self._next_random(best, fresh)

    def _next_optuna(self, best: Best, fresh: Fresh) -> Variation | None:
        # TPE proposes whole configurations; engine changes one parameter at a time, so each
        # proposal is read as the change it makes furthest (in its range) from the best
        for parameter, value in tpe_variations(self.spec.parameters, self.observed, self.seed, best):
            variation = Variation(parameter, value)
            if fresh(best, variation):
                return variation
        return self._next_random(best, fresh)  # TPE keeps to tried ground: a seeded random step

    def _next_grid(self, best: Best, fresh: Fresh) -> Variation | None:
        # one parameter at a time, each swept outward from its best value: a session that starts
        # from an earlier best explores around it first, and the sweep still covers every point.
        # After an accepted step its parameter comes first, onward before back: the budget goes
        # toward the optimum the step points at, not to the other side of the sweep
        for p in self._leading_first():
            for value in self._onward_first(p.name, nearest_first(self._grid[p.name], best[p.name]), best):
                if value != best[p.name] and fresh(best, Variation(p.name, value)):
                    return Variation(p.name, value)
        return None

    def _leading_first(self) -> list[ParameterRange]:
        parameters = self.spec.parameters
        return sorted(parameters, key=lambda p: p.name != self.leading)  # stable: the rest in order

    def _onward_first(self, name: str, values: list[float], best: Best) -> list[float]:
        """`values` with those in the direction of the parameter's last accepted step first."""
        heading = self.heading.get(name)
        if heading is None:
            return values
        return sorted(values, key=lambda x: (x - best[name]) * heading <= 0)  # stable: nearest first

    def _next_neighbour(self, best: Best, fresh: Fresh) -> Variation | None:
        # every neighbour of the best (both ways, each parameter) is listed, so none is missed
        untried = [
            Variation(p.name, value)
            for p in self.spec.parameters
            for value in neighbours(p, best[p.name], self.spec.radius)
            if value != best[p.name] and fresh(best, Variation(p.name, value))
        ]
        # the last improvement's parameter onward first (the nearest such step); then any, at random
        heading = self.heading.get(self.leading or "")
        onward = [v for v in untried if v.parameter == self.leading and heading is not None
                  and (v.value - best[v.parameter]) * heading > 0]  # fmt: skip
        if onward:
            return min(onward, key=lambda v: abs(v.value - best[v.parameter]))
        return self.rng.choice(untried) if untried else None

    def _next_random(self, best: Best, fresh: Fresh) -> Variation | None:
        for _ in range(MAX_REJECTIONS):
            p: ParameterRange = self.rng.choice(self.spec.parameters)
            value = quantize(p, self.rng.uniform(p.min, p.max))
            if value != best[p.name] and fresh(best, Variation(p.name, value)):
                return Variation(p.name, value)
        return None  # the space is considered exhausted
