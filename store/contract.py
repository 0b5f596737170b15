"""The storage contract: what engine needs from an event store, whatever holds the bytes.

Two implementations keep it: the LMDB log (store.log.EventLog), durable and shared by processes,
and an in-memory store (store.memory.MemoryStore) for tests and throwaway runs. The web view and a
cluster backend read and write through this seam; tests/test_store_contract.py runs one suite on
both.

The rules every store keeps:
- sequence numbers start at 1 and are dense: each batch continues at last + 1, nothing is deleted;
- a batch (events and the blobs they refer to) is appended whole or not at all;
- a run's events can be listed by tag without decoding them (the run index);
- blobs are content-addressed: writing the same key twice keeps the first bytes;
- `swap` is a compare-and-set that exactly one of many racing processes wins.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol, TypeVar

T = TypeVar("T")

Row = tuple[str, str, bytes]  # (run id, event tag, encoded event)


class EncodedRows(list[Row]):
    """Rows just encoded from events of this process, those events beside them (`events[i]` is row i's).

    A store's keeper folds these objects instead of decoding the bytes again: a decode made a second
    copy of every string of a run's state (cases, variants, output hashes) and of the experiment's
    spec (benchmarks/README.md#in-code-memory), beside the live run's own, and cost CPU per event. Events are
    frozen, and the fold of the live objects is the fold of the log: the live run's report, folded
    from these objects, is the one replay reproduces."""

    __slots__ = ("events", "live_state")

    def __init__(self, rows: Iterable[Row], events: list[Any]) -> None:
        super().__init__(rows)
        self.events = events
        # set by a run's log writer: the events are folded into a report state this process holds
        # live (store.kept.held_states)
        self.live_state = False


class EventStore(Protocol):
    # whether calls may block on I/O (the LMDB log's durable commits): the actors then make them in a
    # worker thread; an in-memory store is called inline (and a test's virtual clock stays exact)
    blocking_io: bool

    def append(self, batch: Sequence[Row], blobs: Iterable[tuple[str, bytes]] = ()) -> int:
        """Append a batch and its blobs atomically; the last sequence number after it (an empty batch
        changes nothing)."""
        ...

    def read(self, from_seq: int = 1, to_seq: int | None = None) -> Iterator[tuple[int, bytes]]:
        """Every event with from_seq <= seq (<= to_seq), in order."""
        ...

    def read_run(
        self, run_id: str, from_seq: int = 1, tags: set[str] | None = None
    ) -> Iterator[tuple[int, bytes]]:
        """One run's events (only those tags, when given), in order."""
        ...

    def run_index(self, run_id: str, from_seq: int = 1, limit: int | None = None) -> list[tuple[int, str]]:
        """(seq, tag) of a run's events from from_seq on, without decoding them."""
        ...

    def run_ids(self) -> list[str]:
        """Every run, oldest first (by its first event)."""
        ...

    def get_blob(self, key: str) -> bytes | None: ...

    def swap(self, key: str, expected: bytes | None, new: bytes | None) -> bytes | None:
        """Compare-and-set one small value (e.g. a run's lease), atomically across every process
        sharing the store: if the value at `key` is `expected` (None: absent), it becomes `new`
        (None: deleted). Returns the value found, so the swap happened iff it equals `expected`."""
        ...

    def last_seq(self) -> int: ...

    # a live run's report state, held by its process and saved from there for the store's readers
    # (store.kept.held_states): the store keeps no second copy of it
    def hold_state(self, run_id: str, folded_to: int) -> bool:
        """The calling process folds the run's events into a state of its own from `folded_to` on;
        False when the store keeps no states (nothing to offer)."""
        ...

    def offer_state(self, run_id: str, seq: int, items: list[tuple[bytes, bytes]]) -> None:
        """The held state's encoded snapshot at `seq`, put with the next write of the run's events."""
        ...

    def release_state(self, run_id: str, items: list[tuple[bytes, bytes]]) -> None:
        """The run's pipeline has closed: its final snapshot (a write of its own), and the hold ends."""
        ...

    def close(self) -> None: ...


async def store_call(log: EventStore, fn: Callable[..., T], *args: Any) -> T:
    """Call a store method from a Trio task: in a worker thread when the store blocks on I/O."""
    if not getattr(log, "blocking_io", True):
        return fn(*args)
    import trio

    return await trio.to_thread.run_sync(fn, *args)
