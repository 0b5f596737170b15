"""A run as the commands that act on it see it: its status and its state of one grading round.

The runtime needs these (a resume, a cancel, a lease and a schedule ask whether a run's process is
alive; a regrade or a label round reads the state it grades again), so they sit below the views,
which read them too. All of it only reads the store: safe from any process.

`engine list` and `engine status` read only the kept summaries and status figures: the run state's
fold, the experiment plan and the state's snapshot are imported where a path folds or plans.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from engine.errors import NotFoundError
from engine.events import kinds as k
from engine.store.contract import EventStore
from engine.store.kept.read import SUMMARIES, kept, load, run_ids
from engine.store.projection import run_events
from engine.store.projections.status import StatusView, counts_of, status_of
from engine.store.projections.summary import RunSummary

if TYPE_CHECKING:
    from engine.store.projections.run_state import RunState


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
        from engine.store.kept.state_snapshot import STATES

        summary.trials_total = load(log, STATES, summary.run_id).trials_done()
    else:
        from engine.input.experiment_plan import resolve

        planned = resolve(spec, f"run {summary.run_id}", Path(defined.source).parent)
        summary.trials_total = len(planned.variants) * len(spec.cases) * spec.repeat.count
    return summary


def process_alive(pid: int, host: str) -> bool:
    """A 'running' run whose process is gone was killed: it can be resumed."""
    import socket  # only a running run asks
    if host and host != socket.gethostname():
        return True  # cannot tell from here; trust the log
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return pid > 0


def run_status(log: EventStore, run_id: str, now: float) -> StatusView:
    """`engine status`: the run's summary and the figures kept beside its state (the state itself is
    folded only while those are behind the log: a live run between two saves of its state)."""
    from engine.store.kept.status_record import STATUS

    counts = kept(log, STATUS, run_id)
    if counts is None:
        counts = counts_of(run_state(log, run_id))
    elif not counts.defined:
        raise NotFoundError(f"run {run_id!r} has no experiment definition")
    return status_of(summarize(log, run_id), counts, now)


def run_state(log: EventStore, run_id: str, grading: int | None = None, replay: bool = False) -> RunState:
    """The run's state: of the latest grading round, its snapshot folded forward over the events
    after it; of an earlier round, or to `replay`, folded from the whole log."""
    from engine.store.kept.state_snapshot import STATES
    from engine.store.projections.run_state import load_run_state

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


def grading_rounds(log: EventStore, run_id: str) -> list[tuple[int, str]]:
    """The run's grading rounds with their names: 0 is the run's own, one more per regrade."""
    regrades = run_events(log, run_id, {"regrade.started"})
    named = [(e.grading, e.name or f"round {e.grading}") for e in regrades if isinstance(e, k.RegradeStarted)]
    return [(0, "original"), *named]
