"""Best accepted variation per parameter, across tuning sessions: `engine best` lists it, and a
scheduled session starts from it."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from engine.events import kinds as k
from engine.store.contract import EventStore
from engine.store.projection import Projection


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


_FIELDS = [f.name for f in dataclasses.fields(BestVariation)]  # each named as on the event


def _accepted(best: dict[str, BestVariation], event: k.VariationAccepted) -> None:
    """The highest-scoring acceptance wins; on a tie the later one (the log's order) does."""
    current = best.get(event.parameter)
    if current is None or event.candidate_score >= current.candidate_score:
        best[event.parameter] = BestVariation(**{name: getattr(event, name) for name in _FIELDS})


BEST = Projection({k.VariationAccepted: _accepted})


def best_variations(log: EventStore, run_ids: Iterable[str] | None = None) -> list[BestVariation]:
    """The best accepted variation of each parameter over `run_ids` (every run in the store when
    None), by parameter name."""
    best: dict[str, BestVariation] = {}
    for run_id in log.run_ids() if run_ids is None else run_ids:
        BEST.load(log, run_id, best)
    return sorted(best.values(), key=lambda b: b.parameter)
