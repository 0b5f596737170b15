"""What the log hands its keepers: the caches kept beside the events (snapshots, the trial index,
report digests), written in the same transaction as each batch.

The log knows them only by this protocol (as an event-sourcing recorder is handed its snapshotting):
whoever opens a store for writing says which keepers it has (`engine.store.open.open_event_log`, the one
place that wires the default ones), so the log's own modules import no projection. A log opened with
none still lists its runs (store.log.kept_io): readers then fold the log where a kept record is behind.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from engine.store.contract import Row
from engine.store.log.kept_io import TxnSnapshots


class BatchKeeper(Protocol):
    """Keeps records derived from the log, folded as batches are committed."""

    def advance(self, io: TxnSnapshots, batch: Sequence[Row], first: int) -> None:
        """Fold the batch (its first event is number `first`), inside the write transaction, before
        the batch's own rows are in: what `io` reads is the log before it."""
        ...

    def forget(self) -> None:
        """The transaction was abandoned (or the kept records cleared): what the last `advance`
        folded never happened."""
        ...

    def adopt(self, run_id: str, folded_to: int) -> bool:
        """The process holds the run's report state (store.kept.held_states); False: not kept here."""
        ...

    def offer(self, run_id: str, seq: int, items: list[tuple[bytes, bytes]]) -> None: ...

    def release(self, io: TxnSnapshots, run_id: str, items: list[tuple[bytes, bytes]]) -> bool: ...


# made at the first append, not at opening: a reader never imports the keepers' projections
Keepers = Callable[[], Sequence[BatchKeeper]]


def no_keepers() -> Sequence[BatchKeeper]:
    return ()
