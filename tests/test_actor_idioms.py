"""Actors in trio's idiom: a slow subscriber never stalls the pipeline; limits report statistics."""

from __future__ import annotations

import math

import pytest
import trio

from engine.actors.aggregator import aggregator
from engine.actors.messages import Committed, Feedback, WriteBatch
from engine.actors.targets.adaptive import AdaptiveLimit
from engine.events import kinds as k
from engine.store.projections.run_state import RunState


async def test_a_subscriber_that_stops_reading_is_cut_off_not_waited_for() -> None:
    committed_send, committed = trio.open_memory_channel[Committed](10)
    feedback_send, _feedback = trio.open_memory_channel[Feedback](math.inf)
    slow_send, slow = trio.open_memory_channel[k.Event](1)  # room for one event, never read
    fast_send, fast = trio.open_memory_channel[k.Event](100)
    events = [k.CancelRequested(run_id="r", reason=str(i)) for i in range(3)]
    async with committed_send:
        for event in events:
            committed_send.send_nowait(Committed([WriteBatch([event])], 0))
    state = RunState("r")
    # returns although `slow` is never read: the fold and the other subscribers went on
    subscribers = [slow_send, fast_send]
    await aggregator(committed=committed, state=state, feedback=feedback_send, subscribers=subscribers)
    assert state.cancel_requested
    assert slow.receive_nowait().reason == "0"
    with pytest.raises(trio.EndOfChannel):  # then cut off: its channel was closed
        slow.receive_nowait()
    assert [fast.receive_nowait().reason for _ in range(3)] == ["0", "1", "2"]


def test_an_adaptive_limit_reports_its_statistics() -> None:
    limit = AdaptiveLimit(8)
    limit.on_throttle()
    stats = limit.statistics()
    assert (stats.limit, stats.ceiling, stats.in_use, stats.waiting, stats.throttled) == (4, 8, 0, 0, 1)
