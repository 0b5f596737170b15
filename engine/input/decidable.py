"""`engine validate` and `engine run` say, before anything runs, what the planned cases and repeats
can decide: the smallest p-values, and a warning for each decision they can never reach."""

from __future__ import annotations

from engine.actors.variants import expand_variants
from engine.errors import warn_input
from engine.events.spec import ExperimentSpec
from engine.stats.decidability import decide, plan_of, summary, warnings


def run_notes(spec: ExperimentSpec, file: str, figures: bool) -> list[str]:
    """What `engine run` prints once the run has started (a run refused before that, say because
    another process holds it, stays one line): `warning: FILE: ...` per decision the plan cannot
    reach, then the smallest p-values when `figures`."""
    plan = plan_of(spec, len(expand_variants(spec)))
    decision = decide(plan)
    lines = [f"warning: {file}: {message}" for message in warnings(plan, decision)]
    return lines + ([f"{file}: {summary(plan, decision)}"] if figures else [])


def announce(spec: ExperimentSpec, file: str) -> str:
    """Warn (`warning: FILE: ...`) for each decision the plan cannot reach; the summary line."""
    plan = plan_of(spec, len(expand_variants(spec)))
    decision = decide(plan)
    for message in warnings(plan, decision):
        warn_input(file, "", message)
    return summary(plan, decision)
