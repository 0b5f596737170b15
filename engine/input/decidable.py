"""`engine validate` and `engine run` say, before anything runs, what the planned cases and repeats
can decide: the smallest p-values, and a warning for each decision they can never reach."""

from __future__ import annotations

from engine.errors import warn_input
from engine.input.experiment_plan import ExperimentPlan
from engine.stats.decidability import decide, plan_of, summary, warnings


def run_notes(plan: ExperimentPlan, figures: bool) -> list[str]:
    """What `engine run` prints once the run has started (a run refused before that, say because
    another process holds it, stays one line): `warning: FILE: ...` per decision the plan cannot
    reach, then the smallest p-values when `figures`."""
    file = plan.file
    planned = plan_of(plan.spec, len(plan.variants))
    decision = decide(planned)
    lines = [f"warning: {file}: {message}" for message in warnings(planned, decision)]
    return lines + ([f"{file}: {summary(planned, decision)}"] if figures else [])


def announce(plan: ExperimentPlan) -> str:
    """Warn (`warning: FILE: ...`) for each decision the plan cannot reach; the summary line."""
    planned = plan_of(plan.spec, len(plan.variants))
    decision = decide(planned)
    for message in warnings(planned, decision):
        warn_input(plan.file, "", message)
    return summary(planned, decision)
