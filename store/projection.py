"""Projections are pure folds `evolve(state, event) -> state` over the log.

The aggregator applies the same fold live that `engine replay` applies to the
stored log, so the two cannot disagree.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Generic, TypeVar

from engine.events.kinds import TAG_BY_TYPE, AnyEvent
from engine.store.contract import EventStore
from engine.store.guard import decode_stored

S = TypeVar("S")
Evolve = Callable[[S, AnyEvent], S]


def fold(evolve: Evolve[S], state: S, events: Iterable[AnyEvent]) -> S:
    for event in events:
        state = evolve(state, event)
    return state


def run_events(log: EventStore, run_id: str, tags: set[str] | None = None) -> Iterator[AnyEvent]:
    """A run's decoded events in log order."""
    for seq, data in log.read_run(run_id, tags=tags):
        yield decode_stored(log, seq, data)


def all_events(log: EventStore, from_seq: int = 1) -> Iterator[tuple[int, AnyEvent]]:
    for seq, data in log.read(from_seq):
        yield seq, decode_stored(log, seq, data)


class Projection(Generic[S]):
    """A fold by event type. Its handlers name the events it reads, so the tags it asks the log
    for are derived from them: a new event it handles is read without a hand-kept list to update."""

    def __init__(self, handlers: Mapping[type, Callable[[S, Any], None]]) -> None:
        self.handlers = dict(handlers)
        self.tags = frozenset(TAG_BY_TYPE[t] for t in self.handlers)

    def evolve(self, state: S, event: AnyEvent) -> S:
        handler = self.handlers.get(type(event))
        if handler is not None:
            handler(state, event)
        return state

    def load(self, log: EventStore, run_id: str, state: S) -> S:
        """The state folded from one run's events (only the tags this projection reads)."""
        evolve = self.evolve
        for seq, data in log.read_run(run_id, tags=set(self.tags)):
            evolve(state, decode_stored(log, seq, data))
        return state
