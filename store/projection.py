"""Projections are pure folds `evolve(state, event) -> state` over the log.

The aggregator applies the same fold live that `engine replay` applies to the
stored log, so the two cannot disagree.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from engine.events.codec import decode
from engine.events.kinds import AnyEvent
from engine.store.contract import EventStore

S = TypeVar("S")
Evolve = Callable[[S, AnyEvent], S]


def fold(evolve: Evolve[S], state: S, events: Iterable[AnyEvent]) -> S:
    for event in events:
        state = evolve(state, event)
    return state


def run_events(log: EventStore, run_id: str, tags: set[str] | None = None) -> Iterator[AnyEvent]:
    """A run's decoded events in log order."""
    for _seq, data in log.read_run(run_id, tags=tags):
        yield decode(data)


def all_events(log: EventStore, from_seq: int = 1) -> Iterator[tuple[int, AnyEvent]]:
    for seq, data in log.read(from_seq):
        yield seq, decode(data)
