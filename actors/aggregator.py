"""The aggregator: folds committed events into the live RunState (the same fold replay uses).

It tells the scheduler when a trial reaches a final state, so scheduling
decisions (early exit, budgets) rest on durable facts only, and it fans the
committed events out to subscribers (progress bars, the embedding API) with
send_nowait: a slow subscriber never stalls the durable pipeline. One that falls
a whole buffer behind is cut off (its channel closes; the log has the rest).
"""

from __future__ import annotations

import trio

from engine.actors.messages import Committed, Feedback, TrialDone, WriteBatch
from engine.actors.state_saver import StateSaver
from engine.events import kinds as k
from engine.store.projections.run_state import RunState, evolve


async def aggregator(
    *,
    committed: trio.MemoryReceiveChannel[Committed],
    state: RunState,
    feedback: trio.MemorySendChannel[Feedback],
    subscribers: list[trio.MemorySendChannel[k.Event]],
    saver: StateSaver | None = None,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """`saver` saves the state for the store's readers (actors.state_saver); None: the store folds
    a copy of its own."""
    task_status.started()
    async with committed, feedback:
        async for group, last_seq in committed:
            count = sum(len(batch.events) for batch in group)
            seq = last_seq - count + 1  # the group's events are numbered in a row, as one append added them
            for batch in group:
                _fold(batch, seq, state, feedback, subscribers)
                seq += len(batch.events)
            if saver is not None:
                await saver.folded(count, last_seq)
    for subscriber in subscribers:
        subscriber.close()
    if saver is not None:
        await saver.close()


def _fold(
    batch: WriteBatch,
    first_seq: int,
    state: RunState,
    feedback: trio.MemorySendChannel[Feedback],
    subscribers: list[trio.MemorySendChannel[k.Event]],
) -> None:
    """Fold the batch, its events numbered from `first_seq`: an event the fold cannot take is named
    by its number, as a replay names it (the state is what the store keeps: store.kept.held_states)."""
    for seq, event in enumerate(batch.events, first_seq):
        evolve(state, event, seq)
        done = _trial_done(event)
        if done is not None:
            _tell(feedback, done)
        if subscribers:  # most runs have none: no call per event
            _fan_out(subscribers, event)
    if batch.folded is not None:
        batch.folded.set()


def _fan_out(subscribers: list[trio.MemorySendChannel[k.Event]], event: k.Event) -> None:
    for subscriber in list(subscribers):
        try:
            subscriber.send_nowait(event)
        except trio.WouldBlock:  # a whole buffer behind: cut it off rather than wait for it
            subscriber.close()
            subscribers.remove(subscriber)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            subscribers.remove(subscriber)


def _trial_done(event: k.Event) -> TrialDone | None:
    if isinstance(event, k.TrialGraded):
        return TrialDone((event.variant, event.case, event.repeat), event.passed)
    if isinstance(event, k.TrialFailed):
        return TrialDone((event.variant, event.case, event.repeat), None, event.error_class)
    if isinstance(event, k.TrialSkipped):
        return TrialDone((event.variant, event.case, event.repeat), None)
    return None


def _tell(feedback: trio.MemorySendChannel[Feedback], message: Feedback) -> None:
    try:
        feedback.send_nowait(message)
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        pass  # the scheduler has finished; late news is already in the state
