"""The live run's report state, saved for the store's readers from the aggregator's own copy.

The store does not fold a second copy of a run its process holds (store.kept.held_states): the
aggregator tells the saver what it folded, and the saver encodes a snapshot when one is due (as often
as the store's keeper would: store.kept.snapshots.save_every) and once more when the pipeline closes.
The encoding runs in a worker thread for a store that blocks: the aggregator waits for it, and it is
the state's only writer, so the state holds still; the other actors only read it.
"""

from __future__ import annotations

from engine.store.contract import EventStore, store_call
from engine.store.kept.snapshots import STATES, save_every, state_items
from engine.store.projections.run_state import RunState


class StateSaver:
    def __init__(self, log: EventStore, state: RunState, folded_to: int) -> None:
        """`folded_to`: the run's last event already in `state` (0: a new run, nothing logged yet)."""
        self._log, self._state = log, state
        self._held = log.hold_state(state.run_id, folded_to)
        self._seq = folded_to
        self._unsaved = 0
        self._offered: list[tuple[bytes, bytes]] = []  # the last offer: the store puts it with a later batch

    async def folded(self, events: int, last_seq: int) -> None:
        """The aggregator folded `events` more, the last of them number `last_seq`."""
        if not events:  # a barrier: `last_seq` is the log's, not one of the run's
            return
        self._seq = last_seq
        self._unsaved += events
        if self._held and self._unsaved >= save_every(STATES, self._state):
            items = await store_call(self._log, state_items, self._state, last_seq)
            self._log.offer_state(self._state.run_id, last_seq, items)
            self._offered, self._unsaved = items, 0

    async def close(self) -> None:
        """The pipeline has closed: the state's final snapshot (the last offer again when nothing was
        folded since: no batch may have come to put it)."""
        if not self._held:
            return
        items = self._offered
        if self._unsaved:
            items = await store_call(self._log, state_items, self._state, self._seq)
        await store_call(self._log, self._log.release_state, self._state.run_id, items)
