"""`engine mark RUN green|red`: a person's verdict on a run. The run history follows it (a run marked
green is a baseline for `engine compare last-green`, one marked red never is), whatever its figures."""

from __future__ import annotations

import time

from engine.errors import InputError
from engine.events import kinds as k
from engine.store.contract import EventStore
from engine.store.writes import append_events


def mark_run(log: EventStore, run_id: str, mark: str, by: str) -> None:
    if mark not in ("green", "red"):
        raise InputError("engine mark", "MARK", f"expected green or red, got {mark!r}")
    event = k.RunMarked(run_id=run_id, ts=time.time(), mark=mark, by=by)  # type: ignore[arg-type]
    append_events(log, [event])
