"""What a Ray worker runs for one trial: the subject call and the cheap graders, next to the output.

The function is plain Python (Ray sends it by reference: `engine` must be importable on the workers).
It builds the target from its spec (Python targets by import path: a callable registered in the
coordinator's process cannot travel), runs the trial in its own Trio loop, and hands back what the
coordinator logs. Nothing here writes to the log: the coordinator stays its single writer.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import trio

from engine.actors.executor import call_trial, failure
from engine.actors.graders.factory import GraderContext, grader_specs, make_grader
from engine.actors.grading_pool import submission_of
from engine.actors.messages import GradeJob, TrialJob, WriteBatch
from engine.actors.targets.base import TargetError
from engine.actors.targets.registry import target_maker
from engine.events.graders import GRADERS
from engine.events.kinds import GraderResult
from engine.events.spec import GraderSpec


@dataclass(slots=True)
class TrialOutcome:
    """A trial's completion or failure (with its blobs) and, when there is an output, what to grade."""

    batch: WriteBatch
    grade_job: GradeJob | None


def run_trial_on_worker(job: TrialJob, base_dir: str | None, graders: list[GraderSpec]) -> TrialOutcome:
    return trio.run(_run_trial, job, Path(base_dir) if base_dir else None, graders)


async def _run_trial(job: TrialJob, base_dir: Path | None, graders: list[GraderSpec]) -> TrialOutcome:
    make_target = target_maker({}, base_dir)
    try:
        target = make_target(job.target)
    except TargetError as exc:
        return TrialOutcome(WriteBatch([failure(job, exc, 0.0)]), None)
    try:
        batch, grade_job = await call_trial(job, target)
    finally:
        await target.aclose()
    if grade_job is not None:
        grade_job.precomputed = await _cheap_grades(grade_job, graders, base_dir)
    return TrialOutcome(batch, grade_job)


async def _cheap_grades(
    job: GradeJob, specs: list[GraderSpec], base_dir: Path | None
) -> list[GraderResult | None]:
    """Every grader but the LLM judges (they stay in the coordinator's judge pool, under its budget)."""
    # python graders find their module through the target maker's context (the experiment's folder)
    context = GraderContext(make_target=target_maker({}, base_dir))
    submission = submission_of(job)
    results: list[GraderResult | None] = []
    for spec in grader_specs(specs):
        if GRADERS.of(spec).calls_model:
            results.append(None)
            continue
        grader = make_grader(spec, context)
        try:
            results.append(await grader.grade(submission))
        finally:
            await grader.aclose()
    return results
