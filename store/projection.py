"""Projections are pure folds `evolve(state, event) -> state` over the log.

The aggregator applies the same fold live that `engine replay` applies to the
stored log, so the two cannot disagree.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Generic, TypeVar

from engine.events.codec import EventDecodeError
from engine.events.kinds import TAG_BY_TYPE, AnyEvent
from engine.store.contract import EventStore
from engine.store.log.guard import decode_of_run

S = TypeVar("S")
Evolve = Callable[[S, AnyEvent], S]


def fold(evolve: Evolve[S], state: S, events: Iterable[AnyEvent]) -> S:
    for event in events:
        state = evolve(state, event)
    return state


def run_events(log: EventStore, run_id: str, tags: set[str] | None = None) -> Iterator[AnyEvent]:
    """A run's decoded events in log order."""
    for seq, data in log.read_run(run_id, tags=tags):
        yield decode_of_run(log, seq, data, run_id)


OnUnusable = Callable[[S, int, str], None]
# what a stored event that decodes but cannot be folded raises (a NaN where a number must be, a
# value out of range): the fold records it and goes on, so one bad event never makes a run unreadable
UNUSABLE = (EventDecodeError, ValueError, TypeError, OverflowError, KeyError, AttributeError)


def _ignore(state: Any, seq: int, message: str) -> None:
    return None


class Projection(Generic[S]):
    """A fold by event type. Its handlers name the events it reads, so the tags it asks the log
    for are derived from them: a new event it handles is read without a hand-kept list to update.
    `on_unusable(state, seq, message)` hears of each event the fold had to skip (seq 0: live)."""

    def __init__(
        self, handlers: Mapping[type, Callable[[S, Any], None]], on_unusable: OnUnusable[S] = _ignore
    ) -> None:
        self.handlers = dict(handlers)
        self.tags = frozenset(TAG_BY_TYPE[t] for t in self.handlers)
        self.on_unusable = on_unusable

    def evolve(self, state: S, event: AnyEvent, seq: int = 0) -> S:
        handler = self.handlers.get(type(event))
        if handler is not None:
            try:
                handler(state, event)
            except UNUSABLE as exc:
                self.on_unusable(state, seq, f"{TAG_BY_TYPE[type(event)]}: {exc}")
        return state

    def load(self, log: EventStore, run_id: str, state: S) -> S:
        """The state folded from one run's events (only the tags this projection reads)."""
        evolve = self.evolve
        for seq, data in log.read_run(run_id, tags=set(self.tags)):
            # bytes that no longer decode are damage (StoreDamagedError: `engine check`, a backup);
            # an event that decodes but cannot be folded is skipped by evolve and named in the report
            evolve(state, decode_of_run(log, seq, data, run_id), seq)
        return state
