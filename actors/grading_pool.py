"""The grading pool: workers that run every grader over each output and emit one TrialGraded per trial."""

from __future__ import annotations

import math
import shutil
import time
from collections.abc import Callable

import trio

from engine.actors.channels import put
from engine.actors.graders.grader_protocol import Grader, Submission, composite, result
from engine.actors.graders.judge_call import JudgeBudget
from engine.actors.messages import GradeJob, WriteBatch
from engine.events import kinds as k
from engine.events.graders import GRADERS
from engine.events.kinds import GraderResult

MakeGraders = Callable[[], list[Grader]]


async def grading_pool(
    *,
    size: int,
    grade_jobs: trio.MemoryReceiveChannel[GradeJob],
    emit: trio.MemorySendChannel[WriteBatch],
    make_graders: MakeGraders,
    pass_threshold: float,
    budget: JudgeBudget | None = None,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    async with grade_jobs, emit, trio.open_nursery() as nursery:
        for _ in range(size):
            nursery.start_soon(
                grading_worker, grade_jobs.clone(), emit.clone(), make_graders, pass_threshold, budget
            )
        task_status.started()


async def grading_worker(
    grade_jobs: trio.MemoryReceiveChannel[GradeJob],
    emit: trio.MemorySendChannel[WriteBatch],
    make_graders: MakeGraders,
    pass_threshold: float,
    budget: JudgeBudget | None = None,
) -> None:
    graders = make_graders()
    try:
        async with grade_jobs, emit:
            async for job in grade_jobs:
                events: list[k.Event] = [await grade_one(job, graders, pass_threshold)]
                if budget is not None and budget.exhausted() and not budget.announced:
                    # later trials stay unscored: the report is partial, not wrong
                    budget.announced = True
                    events.append(k.BudgetExhausted(
                        run_id=job.completed.run_id, ts=time.time(), budget="judge_max_tokens",
                        limit=float(budget.limit or 0), used=float(budget.used),
                    ))  # fmt: skip
                await put(emit, WriteBatch(events))
    finally:
        with trio.CancelScope(shield=True):
            for grader in graders:
                await grader.aclose()


def submission_of(job: GradeJob) -> Submission:
    agent = job.completed.agent
    return Submission(
        case=job.case, output=job.output, variant=job.variant, repeat=job.repeat,
        exit_code=job.completed.exit_code, metrics=dict(agent.metrics) if agent else {},
        workspace=job.workspace, workspace_owned=job.workspace_owned,
    )  # fmt: skip


async def grade_all(job: GradeJob, graders: list[Grader]) -> list[GraderResult]:
    """Cheap graders first: when one of their gates fails the trial has failed, so the LLM judges
    are not called; they score 0 with the reason, in the graders' declared order."""
    submission = submission_of(job)
    if job.precomputed is not None and len(job.precomputed) == len(graders):
        cheap = {id(g): found for g, found in zip(graders, job.precomputed, strict=True) if found is not None}
    else:
        cheap = {
            id(g): await grade_safely(g, submission) for g in graders if not GRADERS.of(g.spec).calls_model
        }
    failed_gate = next((r.name for r in cheap.values() if r.gate and not r.passed), None)
    results = []
    for grader in graders:
        found = cheap.get(id(grader))
        if found is None:
            found = (
                await grade_safely(grader, submission)
                if failed_gate is None
                else result(grader.spec, 0.0, False, f"not judged: gate {failed_gate!r} failed")
            )
        results.append(found)
    return results


async def grade_one(job: GradeJob, graders: list[Grader], pass_threshold: float) -> k.TrialGraded:
    try:
        return graded_event(job, await grade_all(job, graders), pass_threshold)
    finally:
        if job.workspace_owned:  # the trial's workspace served its graders
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(shutil.rmtree, job.workspace, True)


async def grade_cheap(job: GradeJob, graders: list[Grader], pass_threshold: float) -> k.TrialGraded:
    """grade_one for graders that are all cheap (none calls a model): each runs, in order, with no
    gate to consult first (the executor's inline grading)."""
    submission = submission_of(job)
    return graded_event(job, [await grade_safely(g, submission) for g in graders], pass_threshold)


async def grade_safely(grader: Grader, submission: Submission) -> GraderResult:
    """The grader's result; a grader that raises (a bug, an output it cannot take) is a grading error
    of this trial, recorded, not the end of the run: inline grading would lose the trial's output."""
    try:
        return await grader.grade(submission)
    except Exception as exc:  # noqa: BLE001  # trio's Cancelled is a BaseException: it still cancels
        return result(grader.spec, None, False, error=f"{type(exc).__name__}: {str(exc)[:300]}")


def graded_event(job: GradeJob, results: list[GraderResult], pass_threshold: float) -> k.TrialGraded:
    score, passed = composite(results, pass_threshold)
    if score is not None and not math.isfinite(score):  # a grader's NaN must not reach the log
        score, passed = None, False
    c = job.completed
    return k.TrialGraded(
        run_id=c.run_id, ts=time.time(), variant=c.variant, case=c.case, repeat=c.repeat,
        score=None if score is None else round(score, 9), passed=passed, grades=results,
        grading=job.grading, judge_tokens=sum(r.tokens for r in results),
    )  # fmt: skip
