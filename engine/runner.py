"""Run one experiment: open the actors' nursery, wire their channels, own their lifetimes.

Lifetimes: the log writer and the aggregator outlive the working actors
(scheduler, executor pool, judge pool, cancel watcher), so that whatever the
working actors queued is committed and folded before the final events and the
report are written, whether the run completed, ran out of budget or was stopped.
"""

from __future__ import annotations

import math
import os
import socket
import time
from dataclasses import dataclass, field

import trio

from actors.executor import MakeTarget, executor_pool
from actors.graders.factory import make_graders
from actors.judge import judge_pool
from actors.messages import Feedback, StopRequested, WriteBatch
from actors.scheduler import Limits, scheduler
from actors.variants import expand_variants, propose_variants
from actors.watcher import watch_for_cancel
from engine.pipeline import Pipeline, open_pipeline
from engine.plan import build_plan
from engine.state import load_state, spec_hash
from events import kinds as k
from events.report import RunReport
from events.spec import ExperimentSpec
from store.blobs import read_text
from store.log import EventLog
from store.projections.run_state import RunState

FINAL_STATUS = {
    "completed": "completed",
    "budget": "partial",
    "wall_time": "partial",
    "cancelled": "cancelled",
}


@dataclass
class RunControl:
    """Lets the caller stop a live run (signals, the embedding API)."""

    _feedback: trio.MemorySendChannel[Feedback] | None = None
    stop_reason: str | None = None

    def stop(self, reason: str = "stopped") -> None:
        self.stop_reason = self.stop_reason or reason
        if self._feedback is not None:
            try:
                self._feedback.send_nowait(StopRequested(reason))
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass


@dataclass
class RunRequest:
    spec: ExperimentSpec | None
    run_id: str
    make_target: MakeTarget
    resume: bool = False
    origin: str = "manual"
    source: str = ""
    control: RunControl = field(default_factory=RunControl)
    subscribers: list[trio.MemorySendChannel[k.Event]] = field(default_factory=list)
    cancel_poll_s: float = 0.25


async def execute_run(log: EventLog, request: RunRequest) -> RunReport:
    load = trio.to_thread.run_sync
    state = await load(load_state, log, request.run_id) if request.resume else RunState(request.run_id)
    spec = state.spec if request.resume and state.spec is not None else request.spec
    if spec is None:
        raise ValueError(f"run {request.run_id} has no experiment definition in the log")
    async with open_pipeline(log, state, request.subscribers) as pipe:
        request.control._feedback = pipe.feedback_send
        reason = await _run_body(log, request, spec, pipe)
        return await _finish(request, reason, pipe)
    raise AssertionError("unreachable")


async def _run_body(log: EventLog, request: RunRequest, spec: ExperimentSpec, pipe: Pipeline) -> str:
    run_id, now, state, emit = request.run_id, time.time(), pipe.state, pipe.emit
    variants = expand_variants(spec)
    if state.spec is None:
        await emit.send(
            WriteBatch(
                [
                    k.ExperimentDefined(
                        run_id=run_id, ts=now, spec=spec, spec_hash=spec_hash(spec), source=request.source
                    )
                ]
            )
        )
    await propose_variants(run_id=run_id, variants=variants, known=set(state.variants), emit=emit)
    total = len(variants) * len(spec.cases) * spec.repeat.count
    started = k.RunStarted(
        run_id=run_id, ts=now, experiment=spec.name, trials_total=total, origin=request.origin,  # type: ignore[arg-type]
        pid=os.getpid(), host=socket.gethostname(), resumed=request.resume,
    )  # fmt: skip
    await pipe.write_and_wait([started])
    watch_from = await trio.to_thread.run_sync(log.last_seq)
    plan = build_plan(spec, run_id, variants, lambda key: read_text(log, key) or "")
    budget = spec.budget
    limits = Limits(
        in_flight=max(2, spec.execution.concurrency * 2),
        max_trials=budget.max_trials,
        max_tokens=budget.max_tokens,
        max_cost_usd=budget.max_cost_usd,
    )
    if request.control.stop_reason is not None:
        return "cancelled"
    jobs_send, jobs = trio.open_memory_channel(limits.in_flight)
    grade_send, grade_jobs = trio.open_memory_channel(limits.in_flight * 2)
    reason = "completed"
    with trio.move_on_after(budget.max_wall_time_s or math.inf) as wall:
        async with trio.open_nursery() as work:
            work.start_soon(
                lambda: executor_pool(
                    size=spec.execution.concurrency, jobs=jobs, emit=emit.clone(), graded=grade_send.clone(),
                    make_target=request.make_target,
                )
            )  # fmt: skip
            work.start_soon(
                lambda: judge_pool(
                    size=spec.execution.judge_concurrency, grade_jobs=grade_jobs, emit=emit.clone(),
                    make_graders=lambda: make_graders(spec.graders),
                    pass_threshold=spec.scoring.pass_threshold,
                )
            )  # fmt: skip
            work.start_soon(
                lambda: watch_for_cancel(
                    log=log, run_id=run_id, from_seq=watch_from + 1, feedback=pipe.feedback_send.clone(),
                    poll_s=request.cancel_poll_s,
                )
            )  # fmt: skip
            async with jobs_send, grade_send:
                reason = await scheduler(
                    plan=plan, state=state, limits=limits, jobs=jobs_send, grade_jobs=grade_send,
                    feedback=pipe.feedback, emit=emit,
                )  # fmt: skip
            work.cancel_scope.cancel()
    if wall.cancelled_caught:
        reason = "wall_time"
        used = round(time.time() - now, 3)
        await emit.send(
            WriteBatch(
                [
                    k.BudgetExhausted(
                        run_id=run_id,
                        ts=time.time(),
                        budget="max_wall_time_s",
                        limit=budget.max_wall_time_s or 0.0,
                        used=used,
                    )
                ]
            )
        )
    return reason


async def _finish(request: RunRequest, reason: str, pipe: Pipeline) -> RunReport:
    run_id, now = request.run_id, time.time()
    final: list[k.Event] = []
    if reason == "cancelled":
        why = request.control.stop_reason or "cancel requested"
        if request.control.stop_reason is not None:
            final.append(k.CancelRequested(run_id=run_id, ts=now, reason=why, by="local"))
        final.append(k.RunCancelled(run_id=run_id, ts=now, reason=why))
    status = FINAL_STATUS[reason]
    final.append(k.RunCompleted(run_id=run_id, ts=now, status=status))  # type: ignore[arg-type]
    await pipe.write_and_wait(final)
    return await pipe.write_report()
