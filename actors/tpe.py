"""Optuna's TPE sampler as a tuning strategy (`strategy = "optuna"`, the optional extra
`engine[optuna]`).

The sampler holds no state of its own between proposals: each one builds a study from the scores the
session has measured (its log's decisions, in order) with a sampler seeded from the spec's seed and
the number of scores, and asks it. The same log therefore gives the same proposals, in a live session
and in one resumed from its log. The proposals are configurations; the session changes one
parameter at a time, so each is read as its change furthest from the best (in units of the
parameter's range), then its other changes.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from engine.actors.search_space import quantize
from engine.events.spec import ParameterRange

Observation = tuple[dict[str, float], float]  # a configuration and its mean score
ASKS = 16  # proposals asked of one study before the session falls back to a seeded random step
STARTUP = 5  # scores before TPE models them (random proposals until then)


def tpe_variations(
    parameters: Sequence[ParameterRange], observed: list[Observation], seed: int, best: dict[str, float]
) -> Iterator[tuple[str, float]]:
    """One-parameter changes of `best` that TPE's proposals point to, most promising first."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)  # not a line per study built and asked
    space = {p.name: _distribution(optuna, p) for p in parameters}
    seeded = (seed * 1_000_003 + len(observed)) % 2**32  # a new draw per proposal, the same on replay
    sampler = optuna.samplers.TPESampler(seed=seeded, n_startup_trials=STARTUP)
    study = optuna.create_study(direction="maximize", sampler=sampler)
    for values, score in observed:
        params = {name: values[name] for name in space if name in values}
        if len(params) == len(space):
            study.add_trial(optuna.trial.create_trial(params=params, distributions=space, value=score))
    ranges = {p.name: p for p in parameters}
    for _ in range(ASKS):
        proposal: dict[str, Any] = study.ask(space).params
        yield from _changes(ranges, proposal, best)


def _distribution(optuna: Any, p: ParameterRange) -> Any:
    return optuna.distributions.FloatDistribution(float(p.min), float(p.max))


def _changes(
    ranges: dict[str, ParameterRange], proposal: dict[str, Any], best: dict[str, float]
) -> list[tuple[str, float]]:
    changes = []
    for name, raw in proposal.items():
        p, value = ranges[name], quantize(ranges[name], float(raw))
        if value != best[name]:
            width = (p.max - p.min) or 1.0
            changes.append((abs(value - best[name]) / width, name, value))
    changes.sort(key=lambda c: (-c[0], c[1]))
    return [(name, value) for _, name, value in changes]
