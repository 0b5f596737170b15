"""Best accepted variation per parameter, across every tuning session in the store."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from engine.events import kinds as k


@dataclass(slots=True)
class BestVariation:
    parameter: str
    value: Any
    candidate_score: float
    baseline_score: float
    delta: float
    run_id: str
    variant: str
    origin: str
    ts: float


def evolve_best(best: dict[str, BestVariation], event: k.AnyEvent) -> dict[str, BestVariation]:
    """The highest-scoring acceptance wins; on a tie the later one (the log's order) does."""
    if not isinstance(event, k.VariationAccepted):
        return best
    current = best.get(event.parameter)
    if current is None or event.candidate_score >= current.candidate_score:
        best[event.parameter] = BestVariation(**{name: getattr(event, name) for name in _FIELDS})
    return best


_FIELDS = [f.name for f in dataclasses.fields(BestVariation)]  # each named as on the event
