"""Read-only questions about the store: which run an id names, its report, its replay (from any process)."""

from __future__ import annotations

from engine.errors import NotFoundError
from engine.events import kinds as k
from engine.events.codec import to_json
from engine.runtime.run_status import run_state
from engine.store.blobs import read_blob
from engine.store.contract import EventStore
from engine.store.projection import run_events, run_events_from
from engine.store.projections.report_builder import build_report


def resolve_run(log: EventStore, run_id: str | None) -> str:
    ids = log.run_ids()
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


def replay_json(log: EventStore, run_id: str, grading: int | None = None) -> bytes:
    """Rebuild the report from the log alone (of one grading round; default: the latest)."""
    from engine.views.report_labels import with_labels

    return with_labels(log, run_id, to_json(build_report(run_state(log, run_id, grading))))


def stored_report(log: EventStore, run_id: str, grading: int | None = None) -> bytes | None:
    """The report written at the end of the run or of a regrade (default: the latest grading's)."""
    written = [e for e in run_events(log, run_id, {"report.written"}) if isinstance(e, k.ReportWritten)]
    if grading is not None:
        written = [e for e in written if e.grading == grading]
    return read_blob(log, written[-1].report_hash) if written else None


def report_json(log: EventStore, run_id: str, grading: int | None = None) -> bytes:
    """`engine report --json` and the web view's run API: the stored report, or one rebuilt from the
    log when the run never wrote one (it is live, or was killed); with people's labels when it has any."""
    from engine.views.report_labels import with_labels

    stored, labelled = stored_report_and_labels(log, run_id, grading)
    if stored is None:
        return replay_json(log, run_id, grading)
    return with_labels(log, run_id, stored, labelled)


INDEX_CHUNK = 16384


def stored_report_and_labels(log: EventStore, run_id: str, grading: int | None) -> tuple[bytes | None, bool]:
    """stored_report's answer, and whether the run has labels, from one pass over the run's index
    (the index of a 50,000-trial run takes a quarter of a second to walk: once is enough)."""
    written: list[int] = []
    labelled, seq = False, 1
    while True:
        index = log.run_index(run_id, seq, limit=INDEX_CHUNK)
        for at, tag in index:
            if tag == "report.written":
                written.append(at)
            elif tag == "label.recorded":
                labelled = True
        if len(index) < INDEX_CHUNK:
            break
        seq = index[-1][0] + 1
    if not written:
        return None, labelled
    events = run_events_from(log, run_id, written[0], {"report.written"})
    found = [e for e in events if isinstance(e, k.ReportWritten) and grading in (None, e.grading)]
    return (read_blob(log, found[-1].report_hash) if found else None), labelled
