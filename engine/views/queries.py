"""Read-only questions about the store: list, status, report, replay. Safe from any process."""

from __future__ import annotations

import os
import socket

from engine.actors.variants import expand_variants
from engine.errors import NotFoundError
from engine.events import kinds as k
from engine.events.codec import to_json
from engine.store.blobs import read_blob
from engine.store.contract import EventStore
from engine.store.projection import run_events
from engine.store.projections.best import BestVariation, evolve_best
from engine.store.projections.report import build_report
from engine.store.projections.run_state import RunState, load_run_state
from engine.store.projections.summary import RunSummary
from engine.store.snapshots import RUN_HEADS, STATES, SUMMARIES, load, run_ids


def list_runs(log: EventStore) -> list[RunSummary]:
    return [summarize(log, run_id) for run_id in run_ids(log)]


def summarize(log: EventStore, run_id: str) -> RunSummary:
    """The run's summary; a "running" run whose process is gone is "interrupted" (resumable)."""
    summary = with_trial_count(log, load(log, SUMMARIES, run_id))
    if summary.status == "running" and not process_alive(summary.pid, summary.host):
        summary.status = "interrupted"
    return summary


def with_trial_count(log: EventStore, summary: RunSummary) -> RunSummary:
    """Runs whose start does not count their trials: a tuning session (it proposes variants as it
    goes) counts the trials it ran; a created run not started yet, the trials it plans. So `list`,
    `status` and the web view give every kind of run one figure."""
    if summary.trials_total:
        return summary
    defined = next(run_events(log, summary.run_id, {"experiment.defined"}), None)
    if not isinstance(defined, k.ExperimentDefined):
        return summary
    spec = defined.spec
    summary.experiment = summary.experiment or spec.name
    if spec.kind == "tune":
        summary.trials_total = load(log, STATES, summary.run_id).trials_done()
    else:
        summary.trials_total = len(expand_variants(spec)) * len(spec.cases) * spec.repeat.count
    return summary


def process_alive(pid: int, host: str) -> bool:
    """A 'running' run whose process is gone was killed: it can be resumed."""
    if host and host != socket.gethostname():
        return True  # cannot tell from here; trust the log
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return pid > 0


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


def run_state(log: EventStore, run_id: str, grading: int | None = None, replay: bool = False) -> RunState:
    """The run's state: of the latest grading round, its snapshot folded forward over the events
    after it; of an earlier round, or to `replay`, folded from the whole log."""
    if grading is None and not replay:
        state = load(log, STATES, run_id)
    else:
        log.run_ids()  # from the log alone: its own list of runs too (damage in it shows here)
        state = load_run_state(log, run_id, grading)
    if state.spec is None:
        raise NotFoundError(f"run {run_id!r} has no experiment definition")
    if grading is not None and state.grading != grading:
        have = ", ".join(str(g) for g in gradings(log, run_id))
        raise NotFoundError(f"run {run_id!r} has no grading round {grading} (it has {have})")
    return state


def gradings(log: EventStore, run_id: str) -> list[int]:
    """The run's grading rounds: 0 (its own) and one per regrade."""
    regrades = run_events(log, run_id, {"regrade.started"})
    return [0, *(e.grading for e in regrades if isinstance(e, k.RegradeStarted))]


def replay_json(log: EventStore, run_id: str, grading: int | None = None, replay: bool = True) -> bytes:
    """Rebuild the report from the log alone (of one grading round; default: the latest); not to
    `replay`: from the run's kept state and the events after it (the same answer, read faster)."""
    from engine.views.labels import with_labels

    return with_labels(log, run_id, to_json(build_report(run_state(log, run_id, grading, replay))))


def stored_report(log: EventStore, run_id: str, grading: int | None = None) -> bytes | None:
    """The report written at the end of the run or of a regrade (default: the latest grading's)."""
    found = load(log, RUN_HEADS, run_id).report_hash(grading)
    return read_blob(log, found) if found else None


def report_json(log: EventStore, run_id: str, grading: int | None = None) -> bytes:
    """`engine report --json` and the web view's run API: the stored report, or one rebuilt from the
    log when the run never wrote one (it is live, or was killed); with people's labels when it has any."""
    from engine.views.labels import with_labels

    stored, labelled = stored_report_and_labels(log, run_id, grading)
    if stored is None:
        return replay_json(log, run_id, grading, replay=False)
    return with_labels(log, run_id, stored, labelled)


def stored_report_and_labels(log: EventStore, run_id: str, grading: int | None) -> tuple[bytes | None, bool]:
    """stored_report's answer, and whether the run has labels, from the run's heads snapshot."""
    heads = load(log, RUN_HEADS, run_id)
    found = heads.report_hash(grading)
    return (read_blob(log, found) if found else None), heads.labelled


def best_variations(log: EventStore) -> list[BestVariation]:
    """Best accepted variation per parameter across all sessions (`engine best`)."""
    best: dict[str, BestVariation] = {}
    for run_id in log.run_ids():
        for event in run_events(log, run_id, {"variation.accepted"}):
            evolve_best(best, event)
    return sorted(best.values(), key=lambda b: b.parameter)
