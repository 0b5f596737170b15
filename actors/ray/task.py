"""What a Ray worker runs for a batch of trials: the subject calls and the cheap graders, next to the
outputs.

The function is plain Python (Ray sends it by reference: `engine` must be importable on the workers).
It builds each target from its spec once per batch (Python targets by import path: a callable
registered in the coordinator's process cannot travel), runs the batch's trials side by side in one
Trio loop, and hands back what the coordinator logs, in the batch's order, with the time the batch
took on the worker (the coordinator sizes the next batches from it: the task's time as the
coordinator sees it includes its wait in Ray's queue). Both travel as msgpack bytes (`ray_wire`), not
pickled. Nothing here writes to the log: the coordinator stays its single writer.

When no grader calls a model (given the pass mark), a trial is graded here whole: its TrialGraded
comes back with its TrialCompleted, and the coordinator has no output to decode and hand to its
grading pool (that hop was most of its CPU per batched trial). Otherwise the cheap graders' results
travel with the output and the judges run in the coordinator.
"""

from __future__ import annotations

import time
from pathlib import Path

import trio

from engine.actors.executor import call_trial, failure, target_for
from engine.actors.graders.factory import GraderContext, grader_specs, make_grader
from engine.actors.graders.grader_protocol import Grader
from engine.actors.grading_pool import grade_cheap, submission_of
from engine.actors.messages import GradeJob, TrialJob, WriteBatch
from engine.actors.ray.wire import BatchOutcome, TrialOutcome, decode_batch, encode_done
from engine.actors.targets.target_maker import target_maker
from engine.actors.targets.target_protocol import Target, TargetError
from engine.events.graders import GRADERS
from engine.events.kinds import GraderResult
from engine.events.spec import GraderSpec


def run_batch_on_worker(payload: bytes) -> bytes:
    """A batch encoded by ray_wire.encode_batch in, its BatchOutcome encoded by encode_done out."""
    started = time.perf_counter()
    batch, jobs = decode_batch(payload)
    folder = Path(batch.base_dir) if batch.base_dir else None
    outcomes = trio.run(_run_batch, jobs, folder, batch.graders, batch.pass_threshold)
    return encode_done(BatchOutcome(outcomes, time.perf_counter() - started))


async def _run_batch(
    jobs: list[TrialJob], base_dir: Path | None, specs: list[GraderSpec], pass_threshold: float | None
) -> list[TrialOutcome]:
    make_target = target_maker({}, base_dir)
    # python graders find their module through the target maker's context (the experiment's folder)
    context = GraderContext(make_target=target_maker({}, base_dir))
    # the judges stay in the coordinator's judge pool, under its budget
    graders = [None if GRADERS.of(s).calls_model else make_grader(s, context) for s in grader_specs(specs)]
    cheap = [g for g in graders if g is not None]
    whole = cheap if pass_threshold is not None and len(cheap) == len(graders) else None
    targets: dict[bytes, Target] = {}
    outcomes: list[TrialOutcome] = [TrialOutcome(WriteBatch([]), None)] * len(jobs)
    grading = trio.Lock()  # a grader instance serves one output at a time, as in the judge pool

    async def one(i: int, job: TrialJob) -> None:
        try:
            target = target_for(targets, job.target, make_target)
        except TargetError as exc:
            outcomes[i] = TrialOutcome(WriteBatch([failure(job, exc, 0.0)]), None)
            return
        batch, grade_job = await call_trial(job, target)
        if grade_job is not None:
            async with grading:
                if whole is not None:
                    batch.events.append(await grade_cheap(grade_job, whole, pass_threshold or 0.0))
                    grade_job = None
                else:
                    grade_job.precomputed = await _cheap_grades(grade_job, graders)
        outcomes[i] = TrialOutcome(batch, grade_job)

    try:
        async with trio.open_nursery() as nursery:
            for i, job in enumerate(jobs):
                nursery.start_soon(one, i, job)
    finally:
        with trio.CancelScope(shield=True):
            for target in targets.values():
                await target.aclose()
            for grader in graders:
                if grader is not None:
                    await grader.aclose()
    return outcomes


async def _cheap_grades(job: GradeJob, graders: list[Grader | None]) -> list[GraderResult | None]:
    """Every grader but the LLM judges (None: they stay in the coordinator's judge pool, under its budget)."""
    submission = submission_of(job)
    return [None if grader is None else await grader.grade(submission) for grader in graders]
