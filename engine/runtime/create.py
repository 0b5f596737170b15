"""Registering an experiment without running it (`engine create`).

The run gets its definition in the log, nothing else: it is "pending", listed and shown like any
run, and `engine run --resume RUN_ID` starts it later, from this definition (so what runs is what
was registered, even if the file changed since). Written under the run's lease, like a cancel, so
it never races a process starting the same id.
"""

from __future__ import annotations

import time
import uuid

from engine.errors import InputError
from engine.events import kinds as k
from engine.events.spec import ExperimentSpec, fingerprint
from engine.runtime.run_lease import holder_alive, me_now
from engine.store.contract import EventStore
from engine.store.lease import release_lease, take_lease
from engine.store.writes import append_events


def create_run(
    log: EventStore, spec: ExperimentSpec, run_id: str, source: str, warnings: tuple[str, ...] = ()
) -> None:
    """Log `spec` as run `run_id`'s definition; an id already in the store is refused."""
    held, holder = take_lease(log, run_id, me_now(uuid.uuid4().hex), holder_alive)
    try:
        if holder is not None or run_id in log.run_ids():
            raise InputError("engine create", "--run-id", f"a new run id: {run_id!r} is already in the store")
        defined = k.ExperimentDefined(
            run_id=run_id, ts=time.time(), spec=spec, spec_hash=fingerprint(spec), source=source,
            warnings=list(warnings),
        )
        append_events(log, [defined])
    finally:
        if holder is None:
            release_lease(log, run_id, held)
