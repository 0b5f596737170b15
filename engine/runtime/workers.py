"""The working actors of a run: executor pool, grading pool and cancel watcher, fed plan by plan.

A plain experiment runs one plan; a tuning session runs one plan per variation
(baseline vs candidate) through the same pools.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial

import trio

from engine.actors.executor import MakeTarget, executor_pool
from engine.actors.graders.factory import GraderContext, make_graders
from engine.actors.graders.judge_call import JudgeBudget
from engine.actors.grading_pool import grade_cheap, grading_pool
from engine.actors.inline_grading import InlineGrading, grades_inline
from engine.actors.messages import GradeJob, TrialJob, WriteBatch
from engine.actors.scheduler import Limits, Plan, Scheduler
from engine.actors.watcher import watch_for_cancel
from engine.events import kinds as k
from engine.events.spec import ExperimentSpec
from engine.runtime.pipeline import Pipeline
from engine.runtime.reuse import Reuse
from engine.store.contract import EventStore
from engine.store.projections.run_state import RunState


def limits_for(spec: ExperimentSpec) -> Limits:
    budget = spec.budget
    costs = [c for c in (budget.max_cost_usd, spec.repeat.cost_limit_usd) if c is not None]
    return Limits(
        in_flight=max(2, spec.execution.concurrency * 2),
        max_trials=budget.max_trials,
        max_tokens=budget.max_tokens,
        max_judge_tokens=spec.tune.eval_budget_tokens if spec.tune is not None else None,
        max_cost_usd=min(costs) if costs else None,
        unreachable_after=spec.execution.unreachable_after,
    )


def grader_context(
    spec: ExperimentSpec, state: RunState, make_target: MakeTarget, reuse: Reuse | None = None
) -> GraderContext:
    """Judges default to the experiment's target; tokens already judged count against the budget; with
    [reuse], a judge call an earlier run made is not made again."""
    spent = state.judge_tokens_spent()
    budget = JudgeBudget(spec.budget.judge_max_tokens, used=spent)
    reuse_grade = reuse.find_grade if reuse is not None else None
    return GraderContext(
        default_target=spec.target, make_target=make_target, budget=budget, reuse_grade=reuse_grade
    )


def executor_for(
    spec: ExperimentSpec,
    make_target: MakeTarget,
    jobs: trio.MemoryReceiveChannel[TrialJob],
    emit: trio.MemorySendChannel[WriteBatch],
    graded: trio.MemorySendChannel[GradeJob],
    context: GraderContext | None = None,
) -> Callable[..., Awaitable[None]]:
    """The executor pool of the experiment's backend: local workers, or Ray tasks (Ray connected).
    Local workers grade their outputs themselves when every grader is cheap (actors.inline_grading)."""
    size = spec.execution.concurrency
    if spec.execution.backend == "ray":
        # imported here: Ray's task wire builds its decoders at import, which a local run never uses
        from engine.actors.ray.executor import RayWork, ray_executor_pool

        folder = getattr(getattr(make_target, "context", None), "base_dir", None)
        work = RayWork(spec.execution.ray, spec.graders, folder, spec.scoring.pass_threshold)
        return partial(ray_executor_pool, size=size, jobs=jobs, emit=emit, graded=graded, work=work)
    grading = None
    if grades_inline(spec.graders):
        graders = spec.graders
        grading = InlineGrading(lambda: make_graders(graders, context), spec.scoring.pass_threshold)
    return partial(
        executor_pool, size=size, jobs=jobs, emit=emit, graded=graded, make_target=make_target,
        grading=grading,
    )  # fmt: skip


@dataclass
class Workers:
    pipe: Pipeline
    limits: Limits
    jobs: trio.MemorySendChannel[TrialJob]
    grade_jobs: trio.MemorySendChannel[GradeJob]
    scheduler: Scheduler | None = None  # the plan running now (its statistics answer live)
    reuse: Reuse | None = None  # where every plan's trials may take earlier outputs from ([reuse])
    grade_reused: Callable[[GradeJob], Awaitable[k.TrialGraded]] | None = None  # cheap graders: inline

    async def run(self, plan: Plan) -> str:
        """Run a plan to its end: 'completed', 'budget', 'cancelled' or 'unreachable'."""
        if plan.reuse is None and self.reuse is not None:
            plan.reuse, plan.grade_reused = self.reuse.find, self.grade_reused
        self.scheduler = Scheduler(
            plan=plan, state=self.pipe.state, limits=self.limits, jobs=self.jobs, grade_jobs=self.grade_jobs,
            feedback=self.pipe.feedback, emit=self.pipe.emit,
        )  # fmt: skip
        return await self.scheduler.run()


@asynccontextmanager
async def open_workers(
    log: EventStore,
    spec: ExperimentSpec,
    pipe: Pipeline,
    make_target: MakeTarget,
    watch_from: int,
    cancel_poll_s: float,
    reuse: Reuse | None = None,
) -> AsyncIterator[Workers]:
    """Start the pools (each ready before the first job is sent); leaving the block cancels whatever
    is still in flight."""
    limits = limits_for(spec)
    jobs_send, jobs = trio.open_memory_channel[TrialJob](limits.in_flight)
    grade_send, grade_jobs = trio.open_memory_channel[GradeJob](limits.in_flight * 2)
    emit, run_id = pipe.emit, pipe.state.run_id
    context = grader_context(spec, pipe.state, make_target, reuse)
    async with trio.open_nursery() as work:
        await work.start(executor_for(spec, make_target, jobs, emit.clone(), grade_send.clone(), context))
        await work.start(
            partial(
                grading_pool, size=spec.execution.judge_concurrency, grade_jobs=grade_jobs, emit=emit.clone(),
                make_graders=lambda: make_graders(spec.graders, context),
                pass_threshold=spec.scoring.pass_threshold, budget=context.budget,
            )
        )  # fmt: skip
        await work.start(
            partial(
                watch_for_cancel, log=log, run_id=run_id, from_seq=watch_from,
                feedback=pipe.feedback_send.clone(), poll_s=cancel_poll_s,
            )
        )  # fmt: skip
        reuse_graders = make_graders(spec.graders, context) if grades_inline(spec.graders) else None
        try:
            async with jobs_send, grade_send:
                grade_reused = None
                if reuse_graders is not None:
                    threshold = spec.scoring.pass_threshold
                    grade_reused = partial(grade_cheap, graders=reuse_graders, pass_threshold=threshold)
                yield Workers(pipe, limits, jobs_send, grade_send, reuse=reuse, grade_reused=grade_reused)
        finally:
            with trio.CancelScope(shield=True):
                for grader in reuse_graders or []:
                    await grader.aclose()
        work.cancel_scope.cancel()
