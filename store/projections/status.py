"""A run's live status: progress, errors, spend and (for tuning) decisions, from its summary and
state. `engine status` and the web view's progress show this one view."""

from __future__ import annotations

import msgspec

from engine.events import kinds as k
from engine.store.projections.run_state import RunState
from engine.store.projections.summary import RunSummary


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


def status_view(summary: RunSummary, state: RunState, now: float) -> StatusView:
    tune = state.spec.tune if state.spec is not None and state.spec.kind == "tune" else None
    elapsed = (summary.finished_ts or now) - summary.started_ts if summary.started_ts else 0.0
    return StatusView(
        run_id=summary.run_id,
        experiment=summary.experiment,
        status=summary.status,
        trials_total=state.trials_total or summary.trials_total,  # a created run's plan
        trials_done=state.trials_done(),
        # a killed run's last "started" trials are not in flight: nothing is executing them
        in_flight=len(state.in_flight) if summary.status == "running" else 0,
        errors=state.trials_errored(),
        passed=state.trials_passed(),
        tokens=state.tokens_used,
        pid=summary.pid,
        elapsed_s=round(elapsed, 1),
        started_ts=summary.started_ts,
        message=summary.message,
        variations=len(state.variations) if tune else None,
        accepted=sum(isinstance(v, k.VariationAccepted) for v in state.variations) if tune else None,
        max_experiments=tune.max_experiments if tune else None,
    )
