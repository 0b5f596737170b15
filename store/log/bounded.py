"""A big batch (`engine import` of a whole run) appended in bounded pieces inside its one transaction.

The keepers fold each piece before its rows are written, as they fold a live run's batches: the trial
index saves and evicts its chunks every `trial_index.EVERY` events, a run's state is saved as often as
its size allows, so what a keeper holds and each piece costs stay bounded whatever the bundle's size
(one piece of a 200k-trial bundle made the index hold every chunk, and its work grow with the bundle).
The transaction stays one: an import is still all or nothing.

A map too small for the batch aborts the transaction and retries it after growing (store.log.writes):
for a batch of a few events that is cheap, for a bundle it folded the whole bundle again at each
doubling. `room_for` says how much map a batch may need, so the map grows once, before it starts.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar

PIECE = 20_000  # events folded by the keepers at a time (a live run's batches are far smaller)
GROWTH = 4  # map bytes a batch may use per byte of its events and blobs (kept records, B-tree pages)
T = TypeVar("T")


def pieces(batch: Sequence[T], first: int) -> Iterator[tuple[Sequence[T], int]]:
    """The batch in pieces of at most `PIECE` events, each with its first sequence number. A batch
    that fits is handed on as it is (the live writer's batches carry their events: store.kept.live_events)."""
    if len(batch) <= PIECE:
        yield batch, first
        return
    for start in range(0, len(batch), PIECE):
        yield batch[start : start + PIECE], first + start


def room_for(batch: Sequence[tuple[str, str, bytes]], blobs: Sequence[tuple[str, bytes]]) -> int:
    """Map bytes the batch may take (0 for a batch of live-run size: the map grows if it must)."""
    if len(batch) <= PIECE:
        return 0
    return GROWTH * (sum(len(row[2]) for row in batch) + sum(len(data) for _, data in blobs))
