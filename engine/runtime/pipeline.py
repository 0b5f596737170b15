"""The log writer and the aggregator, opened together: what every run and regrade writes through.

They live in an outer nursery so that whatever the working actors queued is
committed and folded before the caller writes its final events.
"""

from __future__ import annotations

import math
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial

import trio

from engine.actors.aggregator import aggregator
from engine.actors.messages import Committed, Feedback, WriteBatch
from engine.actors.state_saver import StateSaver
from engine.actors.writer import log_writer
from engine.events import kinds as k
from engine.events.report import RunReport
from engine.runtime.report_blob import report_blob
from engine.store.contract import EventStore
from engine.store.projections.report_builder import build_report
from engine.store.projections.run_state import RunState


@dataclass
class Pipeline:
    emit: trio.MemorySendChannel[WriteBatch]
    feedback: trio.MemoryReceiveChannel[Feedback]
    feedback_send: trio.MemorySendChannel[Feedback]
    state: RunState

    async def write_and_wait(self, events: list[k.Event], blobs: Sequence[tuple[str, bytes]] = ()) -> None:
        """Append events and wait until they are durable and folded into the live state."""
        folded = trio.Event()
        await self.emit.send(WriteBatch(events, list(blobs), folded))
        await folded.wait()

    async def write_report(self) -> RunReport:
        """Render the report from the live state and store it (replay must reproduce these bytes)."""
        await self.write_and_wait([])  # a barrier: everything queued before is durable and folded
        report = build_report(self.state)
        key, stored = report_blob(report)  # its JSON in pieces: engine.runtime.report_blob
        run_id, grading = self.state.run_id, self.state.grading
        written = k.ReportWritten(run_id=run_id, ts=time.time(), report_hash=key, grading=grading)
        await self.write_and_wait([written], [(key, stored)])
        return report


@asynccontextmanager
async def open_pipeline(
    log: EventStore,
    state: RunState,
    subscribers: list[trio.MemorySendChannel[k.Event]] | None = None,
    folded_to: int | None = None,
) -> AsyncIterator[Pipeline]:
    """`folded_to`: `state` holds every event of the run up to that number (0: a new run; the log's
    last number taken before the state was loaded): it is saved for the store's readers from here
    (actors.state_saver) and the store keeps no copy of its own. None: the store keeps its own."""
    emit, inbox = trio.open_memory_channel[WriteBatch](1024)
    committed_send, committed = trio.open_memory_channel[Committed](1024)
    feedback_send, feedback = trio.open_memory_channel[Feedback](math.inf)
    saver = None if folded_to is None else StateSaver(log, state, folded_to)
    async with trio.open_nursery() as lifetime:
        await lifetime.start(partial(log_writer, inbox=inbox, log=log, committed=committed_send))
        aggregate = partial(
            aggregator, committed=committed, state=state, feedback=feedback_send.clone(),
            subscribers=subscribers or [], saver=saver,
        )  # fmt: skip
        await lifetime.start(aggregate)
        async with emit:
            yield Pipeline(emit, feedback, feedback_send, state)
