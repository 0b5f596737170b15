"""What earlier tuning sessions of an experiment left: where each ended, what each evaluated.

Scheduled sessions read it so that each night continues the search instead of repeating it: the
night starts where the last scheduled session ended and first tries configurations no session has
tried yet (see `engine.actors.tuning`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.actors.search_space import Config, config_of
from engine.events import kinds as k
from engine.store.contract import EventStore
from engine.store.projection import run_events

BASELINE = "baseline"
_TAGS = {"experiment.defined", "run.started", "variant.proposed", "variation.accepted", "variation.rejected"}


@dataclass
class PastSession:
    """One tuning session as its log tells it."""

    run_id: str
    experiment: str = ""
    tuned: list[str] = field(default_factory=list)
    origin: str = ""  # of its first start: a resumed session keeps the origin it began with
    params: dict[str, dict[str, Any]] = field(default_factory=dict)  # by variant name
    evaluated: set[str] = field(default_factory=set)  # variants that ran: the baseline, the decided
    last_accepted: str | None = None

    def values(self, variant: str) -> dict[str, float]:
        params = self.params.get(variant, {})
        return {n: float(params[n]) for n in self.tuned if isinstance(params.get(n), int | float)}

    def end(self) -> dict[str, float]:
        """The configuration the session ended with: its last accepted variant, else its baseline."""
        return self.values(self.last_accepted or BASELINE)

    def configs(self) -> set[Config]:
        return {config_of(self.values(v)) for v in self.evaluated if v in self.params}


def read_session(log: EventStore, run_id: str) -> PastSession:
    s = PastSession(run_id)
    for e in run_events(log, run_id, _TAGS):
        if isinstance(e, k.ExperimentDefined) and e.spec.tune is not None:
            s.experiment, s.tuned = e.spec.name, [p.name for p in e.spec.tune.parameters]
        elif isinstance(e, k.RunStarted):
            s.origin = s.origin or e.origin
        elif isinstance(e, k.VariantProposed):
            s.params[e.variant.name] = dict(e.variant.params)
        elif isinstance(e, k.VariationAccepted | k.VariationRejected):
            s.evaluated.update((e.variant, e.baseline))
            if isinstance(e, k.VariationAccepted):
                s.last_accepted = e.variant
    if BASELINE in s.params:
        s.evaluated.add(BASELINE)
    return s


def sessions_of(log: EventStore, experiment: str, before: str | None = None) -> list[PastSession]:
    """The tuning sessions of `experiment`, oldest first; only those begun before `before` if given."""
    found: list[PastSession] = []
    for run_id in log.run_ids():
        if run_id == before:
            break
        session = read_session(log, run_id)
        if session.experiment == experiment:
            found.append(session)
    return found


def last_scheduled_end(log: EventStore, experiment: str) -> dict[str, float] | None:
    """Where the latest scheduled session ended (None before the first one)."""
    scheduled = [s for s in sessions_of(log, experiment) if s.origin == "scheduled"]
    return scheduled[-1].end() if scheduled else None


def earlier_configs(log: EventStore, experiment: str, run_id: str) -> frozenset[Config]:
    """The configurations earlier sessions evaluated, for a scheduled session (empty otherwise: a
    manual session replays its seed's sequence whatever ran before it)."""
    if read_session(log, run_id).origin != "scheduled":
        return frozenset()
    configs: set[Config] = set()
    for session in sessions_of(log, experiment, before=run_id):
        configs |= session.configs()
    return frozenset(configs)
