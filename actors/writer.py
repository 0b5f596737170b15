"""The single log writer: group-commits whatever has queued up, then hands the events on.

One durable LMDB transaction per event caps the rate at the disk's sync rate; taking
everything waiting in the channel into one transaction is what makes the log fast
(benchmarks/README.md#in-code-trials). The commit runs in a worker thread so the actors keep going.
"""

from __future__ import annotations

import trio

from engine.actors.messages import Committed, WriteBatch
from engine.store.contract import EncodedRows, EventStore, store_call
from engine.store.kept.live_events import as_logged
from engine.store.writes import event_rows

MAX_EVENTS_PER_COMMIT = 5000


async def log_writer(
    *,
    inbox: trio.MemoryReceiveChannel[WriteBatch],
    log: EventStore,
    committed: trio.MemorySendChannel[Committed],
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Runs until every sender of `inbox` has closed; then closes `committed`. Each commit's batches go
    on as one message (one hop to the aggregator per commit, not per batch), with the number of the
    last event they added. Its events are marked as folded into the live state (the aggregator's):
    the store keeps no second copy of it (store.kept.held_states)."""
    task_status.started()
    async with inbox, committed:
        while True:
            try:
                first = await inbox.receive()
            except trio.EndOfChannel:
                return
            group = _drain(inbox, first)
            appends = _as_logged(group)
            blobs = [blob for b in group for blob in b.blobs]
            last = await store_call(log, log.append, appends, blobs)
            await committed.send(Committed(group, last))


def _as_logged(group: list[WriteBatch]) -> EncodedRows:
    """The group's rows, marked as folded into the live state; each event the log's fold would fold
    from a decode of its bytes (store.kept.live_events) is replaced by that decode, in its batch too:
    the aggregator's state is then the replay's, to the byte (store.kept.held_states)."""
    appends = event_rows(b.events for b in group)
    as_logged(appends, (b.events for b in group))
    appends.live_state = True
    return appends


def _drain(inbox: trio.MemoryReceiveChannel[WriteBatch], first: WriteBatch) -> list[WriteBatch]:
    group = [first]
    count = len(first.events)
    while count < MAX_EVENTS_PER_COMMIT:
        try:
            batch = inbox.receive_nowait()
        except (trio.WouldBlock, trio.EndOfChannel):
            break
        group.append(batch)
        count += len(batch.events)
    return group
