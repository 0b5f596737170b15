"""A tuning session's position: the current best variant and its parameters, re-driven from the
decisions a stopped session logged, and the candidate each variation makes (one parameter changed)."""

from __future__ import annotations

from typing import Any

import msgspec

from engine.actors.search_space import Config
from engine.actors.tuning import Variation, VariationGenerator, defaults, quantize
from engine.events import kinds as k
from engine.events.spec import ExperimentSpec, TuneSpec, VariantSpec
from engine.runtime.tuning.history import BASELINE

NO_HISTORY: frozenset[Config] = frozenset()
REMEASURED = "+re"  # suffix of an accepted variant measured afresh


class Session:
    """Where the session stands: the current best variant and its parameters."""

    def __init__(self, spec: ExperimentSpec, tune: TuneSpec, earlier: frozenset[Config] = NO_HISTORY) -> None:
        self.spec, self.tune = spec, tune
        ranges = {p.name: p for p in tune.parameters}
        start = defaults(tune)
        for name, value in spec.params.items():
            if name in ranges and isinstance(value, int | float):
                start[name] = quantize(ranges[name], float(value))
        self.best_values = start
        self.best = VariantSpec(name=BASELINE, params={**spec.params, **_clean(start, ranges)})
        self.generator = VariationGenerator(tune, seed=spec.seed, earlier=earlier)
        self.generator.mark(start)  # evaluated as the baseline: never proposed again
        self.ranges = ranges

    def candidate(self, variation: Variation, known: set[str]) -> VariantSpec:
        value = _clean({variation.parameter: variation.value}, self.ranges)[variation.parameter]
        name, n = f"{variation.parameter}={value}", 1
        while name in known:
            n += 1
            name = f"{variation.parameter}={value}#{n}"
        return VariantSpec(name=name, params={**self.best.params, variation.parameter: value})

    def observe(self, variation: Variation, scores: tuple[float, float]) -> None:
        """What a decision measured, for a strategy that learns from it (optuna)."""
        self.generator.observe(self.best_values, variation, *scores)

    def accept(self, variant: VariantSpec, variation: Variation) -> None:
        self.generator.accepted(self.best_values, variation)  # before the best moves: the step's direction
        self.best, self.best_values[variation.parameter] = remeasured(variant), variation.value


def remeasured(variant: VariantSpec) -> VariantSpec:
    """The accepted variant, measured afresh for the decisions after it. The trials that won its
    acceptance were selected for looking good (the winner's curse): compared against them, a later
    candidate would need to beat luck. A new name gives the same configuration new trial seeds."""
    return msgspec.structs.replace(variant, name=f"{variant.name}{REMEASURED}")


def _clean(values: dict[str, float], ranges: dict[str, Any]) -> dict[str, Any]:
    return {n: int(v) if ranges[n].whole else v for n, v in values.items()}


def restore(session: Session, state_variations: list[Any], variants: dict[str, VariantSpec]) -> None:
    """Re-drive the generator through the decisions already in the log."""
    for decided in state_variations:
        proposed = session.generator.next(session.best_values)
        logged = Variation(decided.parameter, float(decided.value))
        if proposed != logged:
            session.generator.mark(session.best_values, logged)
        session.observe(logged, (decided.baseline_score, decided.candidate_score))
        if isinstance(decided, k.VariationAccepted) and decided.variant in variants:
            session.accept(variants[decided.variant], logged)
