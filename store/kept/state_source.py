"""What a reader of the run state's derived records must know of the run state, pinned: its kept
snapshot's version and the event tags its fold reads. `engine status` checks its kept figures
against these without importing the run state's module and reading its type's fields (~20 ms of a
command that should take well under 100). tests/test_state_source.py checks both against the run
state itself: any change to the state's fields or fold fails there until these are updated, so a
record of an older state is still never read as current."""

from __future__ import annotations

from typing import NamedTuple


class StateSource(NamedTuple):
    """A kept state as its derived records see it (store.snapshot_read.Derived)."""

    name: str
    version: str  # as Snapshotted.version gives it: "number.fingerprint"
    tags: frozenset[str]  # the events that change it


RUN_STATE_SOURCE = StateSource(
    "state",
    "2.c69896e5",
    frozenset({
        "budget.exhausted", "cancel.requested", "experiment.defined", "look.decided", "pairwise.judged",
        "race.round_decided", "regrade.started", "report.written", "run.cancelled", "run.completed",
        "run.started", "trial.completed", "trial.failed", "trial.graded", "trial.skipped", "trial.started",
        "variant.eliminated", "variant.proposed", "variation.accepted", "variation.rejected",
    }),
)  # fmt: skip
