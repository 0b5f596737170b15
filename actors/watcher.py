"""Watches the log for a cancel request that another process (`engine cancel`) appended."""

from __future__ import annotations

import trio

from engine.actors.messages import Feedback, StopRequested
from engine.store.contract import EventStore, store_call

CANCEL_TAG = "cancel.requested"


async def watch_for_cancel(
    *,
    log: EventStore,
    run_id: str,
    from_seq: int,
    feedback: trio.MemorySendChannel[Feedback],
    poll_s: float,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Poll the run's index (tags only, nothing decoded) until a cancel request shows up."""
    seq = from_seq
    task_status.started()
    async with feedback:
        while True:
            index = await store_call(log, log.run_index, run_id, seq)
            for found_seq, tag in index:
                if tag == CANCEL_TAG:
                    feedback.send_nowait(StopRequested("cancel requested"))
                    return
                seq = found_seq + 1
            await trio.sleep(poll_s)
