"""A run's live status: progress, errors, spend and (for tuning) decisions, from its summary and
state. `engine status` and the web view's progress show this one view."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from engine.events import kinds as k
from engine.events.outcome import outcome_word
from engine.store.projections.summary import RunSummary

if TYPE_CHECKING:  # `engine status` reads the kept counts without importing the state's fold
    from engine.store.projections.run_state import RunState


class StatusView(msgspec.Struct, kw_only=True, omit_defaults=True):
    run_id: str
    experiment: str
    status: str
    trials_total: int
    trials_done: int
    in_flight: int
    errors: int
    passed: int
    tokens: int
    pid: int
    elapsed_s: float
    started_ts: float = 0.0
    message: str = ""  # why the run ended early, when it did
    # tuning sessions: variations tried and accepted, and the session's cap
    variations: int | None = None
    accepted: int | None = None
    max_experiments: int | None = None
    failed: int = 0  # graded trials that did not pass
    outcome: str = ""  # the status in the words every surface shows (events.outcome)


class StatusCounts(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The few figures of a run's state its status shows: kept beside the state's snapshot (see
    `store.snapshots`), so the status of a run of a million trials does not decode its every cell."""

    defined: bool = False  # the run has its experiment definition
    trials_total: int = 0
    trials_done: int = 0
    in_flight: int = 0
    errors: int = 0
    passed: int = 0
    tokens: int = 0
    tune: bool = False
    variations: int = 0
    accepted: int = 0
    max_experiments: int | None = None
    failed: int = 0


def counts_of(state: RunState) -> StatusCounts:
    tune = state.spec.tune if state.spec is not None and state.spec.kind == "tune" else None
    return StatusCounts(
        defined=state.spec is not None,
        trials_total=state.trials_total,
        trials_done=state.trials_done(),
        in_flight=len(state.in_flight),
        errors=state.trials_errored(),
        passed=state.trials_passed(),
        failed=state.trials_failed(),
        tokens=state.tokens_used,
        tune=tune is not None,
        variations=len(state.variations) if tune else 0,
        accepted=sum(isinstance(v, k.VariationAccepted) for v in state.variations) if tune else 0,
        max_experiments=tune.max_experiments if tune else None,
    )


def status_view(summary: RunSummary, state: RunState, now: float) -> StatusView:
    return status_of(summary, counts_of(state), now)


def status_of(summary: RunSummary, counts: StatusCounts, now: float) -> StatusView:
    elapsed = (summary.finished_ts or now) - summary.started_ts if summary.started_ts else 0.0
    return StatusView(
        run_id=summary.run_id,
        experiment=summary.experiment,
        status=summary.status,
        trials_total=counts.trials_total or summary.trials_total,  # a created run's plan
        trials_done=counts.trials_done,
        # a killed run's last "started" trials are not in flight: nothing is executing them
        in_flight=counts.in_flight if summary.status == "running" else 0,
        errors=counts.errors,
        passed=counts.passed,
        failed=counts.failed,
        outcome=outcome_word(summary.status, counts.trials_done, counts.errors),
        tokens=counts.tokens,
        pid=summary.pid,
        elapsed_s=round(elapsed, 1),
        started_ts=summary.started_ts,
        message=summary.message,
        variations=counts.variations if counts.tune else None,
        accepted=counts.accepted if counts.tune else None,
        max_experiments=counts.max_experiments if counts.tune else None,
    )
