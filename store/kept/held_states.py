"""Report states a run's own process holds live: kept from its copy, not folded a second time.

A live run's aggregator folds every committed event into the run's report state (the one its report
is built from). The store's keeper used to fold the same events into a state of its own, in the
writer's thread, to save it for the readers: two copies of an O(variants x cases) state in one
process (~48 MiB at 200,000 cells; benchmarks/README.md, "One report state"). A store now lets the
process hold the state (`adopt`): the keeper skips that run's state, and the process hands it the
state's encoded snapshot when one is due (`offer`, put in the next write transaction) and when the run
ends (`release`, a transaction of its own).

A held snapshot must say what the log says. The process's state folds the events its own pipeline
appended (their rows are marked `live_state`); any other event of the run that the state would fold
(a cancel appended by another process, or by this one outside the pipeline) ends the hold: the keeper
then catches its own state up from the store, as for any run, and the offers are dropped. Events of
the run the state does not fold (labels) change nothing. Everything here is a cache, never a fact:
a hold that ends early costs memory, not truth.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from engine.store.kept.codec import Snapshotted

Items = list[tuple[bytes, bytes]]


class HeldIO(Protocol):
    def put(self, key: bytes, value: bytes) -> None: ...

    def events(self, run_id: str, from_seq: int, tags: frozenset[str]) -> Iterator[tuple[int, bytes]]: ...


@dataclass(slots=True)
class Hold:
    folded_to: int  # the run's last event (any tag) the keeper knows to be accounted for in the state


class HeldStates:
    """The keeper's side of held states: which runs, how far they are accounted for, their offers.
    `adopt`, `offer` and `drop` are called from the process's own (trio) thread, the rest in the
    writer's transaction: each touches one dict entry at a time (atomic under the GIL)."""

    def __init__(self, snap: Snapshotted[Any]) -> None:
        self.snap = snap
        self._holds: dict[str, Hold] = {}
        self._offers: dict[str, tuple[int, Items]] = {}

    def adopt(self, run_id: str, folded_to: int) -> bool:
        """Whether the run's state is now held. Not when a hold of it exists already: two pipelines of
        one run in this process (a regrade beside a label round) would each fold only its own events
        into its state, and both write live rows; or one that ended without releasing its hold. Both
        are left to the keeper's own copy."""
        self._offers.pop(run_id, None)
        if self._holds.pop(run_id, None) is not None:
            return False
        self._holds[run_id] = Hold(folded_to)
        return True

    def offer(self, run_id: str, seq: int, items: Items) -> None:
        if run_id in self._holds:
            self._offers[run_id] = (seq, items)

    def drop(self, run_id: str) -> None:
        self._holds.pop(run_id, None)
        self._offers.pop(run_id, None)

    def holds(self, run_id: str) -> bool:
        return run_id in self._holds

    def advance(self, io: HeldIO, run_id: str, rows: Sequence[tuple[int, str, bytes]], live: bool) -> bool:
        """A batch of the run, before its rows are in: True when the state stays held (the keeper then
        skips it), after putting the run's pending offer."""
        hold = self._holds.get(run_id)
        if hold is None:
            return False
        tags = self.snap.projection.tags
        if self._unaccounted(io, run_id, hold) or (not live and any(tag in tags for _, tag, _ in rows)):
            self.drop(run_id)
            return False
        hold.folded_to = rows[-1][0]
        offer = self._offers.pop(run_id, None)
        if offer is not None:
            for key, value in offer[1]:
                io.put(key, value)
        return True

    def release(self, io: HeldIO, run_id: str, items: Items) -> bool:
        """The run's pipeline has closed: its final snapshot put, if the hold still says what the log
        says; the hold ends either way."""
        hold = self._holds.get(run_id)
        self.drop(run_id)
        if hold is None or self._unaccounted(io, run_id, hold):
            return False
        for key, value in items:
            io.put(key, value)
        return True

    def forget(self) -> None:
        """The transaction was abandoned: every hold ends (their runs' states are caught up from the
        store by the keeper, as any run's). Rare (a full map grows, then the batch is retried), and
        simpler than undoing: a hold's `folded_to` ahead of the log could hide another process's
        event appended where the abandoned batch was to be."""
        self._holds.clear()
        self._offers.clear()

    def _unaccounted(self, io: HeldIO, run_id: str, hold: Hold) -> bool:
        """Whether the log has an event of the run after `folded_to` that the state folds."""
        return next(io.events(run_id, hold.folded_to + 1, self.snap.projection.tags), None) is not None
