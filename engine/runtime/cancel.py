"""Cancelling a run from outside its process (`engine cancel`, `Engine.cancel`).

A live run is asked to stop: a CancelRequested event its process reads from the log. A run that no
process executes any more (killed, or its machine went down) has nobody to read that request, so it
is ended here: cancelled, its partial results kept, as if its own process had stopped it. Taking the
run's lease first makes the two cases exclusive: a resume starting at the same instant either runs
(and then reads the request) or finds the run cancelled.
"""

from __future__ import annotations

import time
import uuid

from engine.events import kinds as k
from engine.runtime.run_lease import holder_alive, me_now
from engine.runtime.run_status import summarize
from engine.store.contract import EventStore
from engine.store.lease import LeaseHolder, release_lease, take_lease
from engine.store.writes import append_events

STOPPABLE = ("pending", "running", "interrupted")


def request_cancel(log: EventStore, run_id: str, reason: str, by: str) -> None:
    """Append a cancel request; the run's live process stops at its next check of the log."""
    event = k.CancelRequested(run_id=run_id, ts=time.time(), reason=reason, by=by)
    append_events(log, [event])


def cancel_run(log: EventStore, run_id: str, reason: str, by: str) -> LeaseHolder | None:
    """Cancel `run_id`: the live holder asked to stop is returned; None when no process ran it and it
    was ended here (or had already ended)."""
    held, holder = take_lease(log, run_id, me_now(uuid.uuid4().hex), holder_alive)
    if holder is not None:
        request_cancel(log, run_id, reason, by)
        return holder
    try:
        # checked again under the lease: the run may have ended just before we took it
        if summarize(log, run_id).status in STOPPABLE:
            append_events(log, _ended(run_id, reason, by))
    finally:
        release_lease(log, run_id, held)
    return None


def _ended(run_id: str, reason: str, by: str) -> list[k.Event]:
    now = time.time()
    return [
        k.CancelRequested(run_id=run_id, ts=now, reason=reason, by=by),
        k.RunCancelled(run_id=run_id, ts=now, reason=reason),
        k.RunCompleted(run_id=run_id, ts=now, status="cancelled", message="no process was running it"),
    ]
