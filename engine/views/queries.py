"""Read-only questions about the store: which run an id names, its report, its replay (from any process)."""

from __future__ import annotations

from engine.errors import NotFoundError
from engine.events.codec import to_json
from engine.runtime.run_status import run_state
from engine.store.contract import EventStore
from engine.store.kept.read import RUN_HEADS, load, run_ids


def resolve_run(log: EventStore, run_id: str | None) -> str:
    ids = run_ids(log)
    if run_id is None:
        if not ids:
            raise NotFoundError("no runs in this store yet")
        return ids[-1]
    if run_id in ids:
        return run_id
    matches = [i for i in ids if i.startswith(run_id)]
    if len(matches) == 1:
        return matches[0]
    raise NotFoundError(
        f"no run {run_id!r} in this store" if not matches else f"run id {run_id!r} is ambiguous"
    )


def replay_json(log: EventStore, run_id: str, grading: int | None = None, replay: bool = True) -> bytes:
    """Rebuild the report from the log alone (of one grading round; default: the latest); not to
    `replay`: from the run's kept state and the events after it (the same answer, read faster)."""
    from engine.store.projections.report_builder import build_report  # not for resolve_run's callers
    from engine.views.report_labels import with_labels

    return with_labels(log, run_id, to_json(build_report(run_state(log, run_id, grading, replay))))


def stored_report(log: EventStore, run_id: str, grading: int | None = None) -> bytes | None:
    """The report written at the end of the run or of a regrade (default: the latest grading's)."""
    from engine.store.blobs import read_blob  # hashlib: not for resolve_run's callers (`engine status`)

    found = load(log, RUN_HEADS, run_id).report_hash(grading)
    return read_blob(log, found) if found else None
