"""Run one experiment: open the actors' nursery, wire their channels, own their lifetimes.

Lifetimes: the log writer and the aggregator outlive the working actors
(scheduler, executor pool, grading pool, cancel watcher), so that whatever the
working actors queued is committed and folded before the final events and the
report are written, whether the run completed, ran out of budget or was stopped.
"""

from __future__ import annotations

import functools
import math
import os
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from engine.actors.executor import MakeTarget
from engine.actors.messages import Feedback, StopRequested, WriteBatch
from engine.actors.process import run_setup
from engine.actors.sandbox.bwrap import hide_from_sandboxes
from engine.actors.targets.target_maker import target_maker
from engine.actors.targets.target_protocol import TargetError
from engine.actors.variants import propose_variants
from engine.errors import InputError, RunBusyError
from engine.events import kinds as k
from engine.events.graders import GRADERS
from engine.events.report import RunReport
from engine.events.spec import ExperimentSpec, fingerprint
from engine.input.experiment_plan import ExperimentPlan, resolve
from engine.input.flags import check_definition, check_run_id
from engine.input.preflight import check_environment
from engine.runtime.machine import this_machine
from engine.runtime.pipeline import Pipeline, open_pipeline
from engine.runtime.plan import build_plan
from engine.runtime.ray_session import ray_session
from engine.runtime.reuse import Reuse, reuse_for
from engine.runtime.run_lease import run_lease
from engine.runtime.run_status import process_alive
from engine.runtime.workers import open_workers
from engine.store.blobs import read_text
from engine.store.contract import EventStore, store_call
from engine.store.projections.run_state import RunState, load_run_state

FINAL_STATUS = {
    "completed": "completed",
    "budget": "partial",
    "wall_time": "partial",
    "cancelled": "cancelled",
    "unreachable": "failed",
}


@dataclass
class RunControl:
    """Lets the caller stop a live run (signals, the embedding API)."""

    _feedback: trio.MemorySendChannel[Feedback] | None = None
    stop_reason: str | None = None
    stopping: trio.Event = field(default_factory=trio.Event)  # set by stop(): for waits before the run

    def stop(self, reason: str = "stopped") -> None:
        self.stop_reason = self.stop_reason or reason
        self.stopping.set()
        if self._feedback is not None:
            try:
                self._feedback.send_nowait(StopRequested(reason))
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass


@dataclass
class RunRequest:
    spec: ExperimentSpec | ExperimentPlan | None  # a spec is resolved here; None: the log's (a resume)
    run_id: str
    callables: Mapping[str, Callable[..., Any]] = field(default_factory=dict)  # python targets by name
    resume: bool = False
    origin: str = "manual"
    source: str = ""
    control: RunControl = field(default_factory=RunControl)
    subscribers: list[trio.MemorySendChannel[k.Event]] = field(default_factory=list)
    cancel_poll_s: float = 0.25

    @property
    def base_dir(self) -> Path:
        """The experiment file's folder: relative paths and python target modules resolve there."""
        return Path(self.source).resolve().parent if self.source else Path.cwd()

    def make_target(self) -> MakeTarget:
        return target_maker(self.callables, self.base_dir)


def refuse_if_live(state: RunState) -> None:
    """A run another live process is executing must not be resumed: its trials would run twice."""
    if state.status != "running" or not state.pid or state.pid == os.getpid():
        return
    if process_alive(state.pid, state.host):
        raise RunBusyError(
            f"run {state.run_id} is still running (pid {state.pid} on {state.host or 'this host'}): "
            f"wait for it to end, or `engine cancel {state.run_id}` and resume it after"
        )


async def execute_run(log: EventStore, request: RunRequest) -> RunReport:
    if not request.resume:  # the id and the definition must fit the log before anything is logged
        check_run_id(request.run_id, request.source or "run", "run_id")
        spec = request.spec.spec if isinstance(request.spec, ExperimentPlan) else request.spec
        if spec is not None:
            check_definition(spec, request.source or spec.name)
    # the lease first: the state read below is then final (no other process can still add to it)
    async with run_lease(log, request.run_id):
        return await _execute_leased(log, request)
    raise AssertionError("unreachable")


async def _execute_leased(log: EventStore, request: RunRequest) -> RunReport:
    state, folded_to = RunState(request.run_id), 0
    if request.resume:  # the log's end first: the state loaded after it holds at least that much
        folded_to = await store_call(log, log.last_seq)
        state = await store_call(log, load_run_state, log, request.run_id)
    refuse_if_live(state)
    plan = _resolved(request, state)
    # before the first event: a missing key or module is a clear error, not a crashed run
    check_environment(plan, request.callables)
    store_folder = getattr(log, "path", None)
    if isinstance(store_folder, Path):  # no sandboxed agent may read (or learn from) the store
        hide_from_sandboxes(store_folder)
    # a run to reuse from that the store does not hold is bad input too
    reuse = await store_call(log, reuse_for, log, plan.spec, request.run_id, request.source or plan.spec.name)
    # a Ray backend connects before the first event too: a bad address is exit 2, nothing logged
    async with ray_session(plan, request.control.stopping):
        async with open_pipeline(log, state, request.subscribers, folded_to) as pipe:
            request.control._feedback = pipe.feedback_send
            reason = await _run_body(log, request, plan, pipe, reuse)
            judges_pairs = any(GRADERS.of(g).pairwise for g in plan.spec.graders)
            if judges_pairs and reason in ("completed", "budget"):  # every pair, judged side by side
                # imported here: the pairwise round's modules are start-up a run without one never needs
                from engine.runtime.pairwise_round import pairwise_unless_stopped

                make_target = request.make_target()
                stop_poll = request.cancel_poll_s
                if await pairwise_unless_stopped(log, plan.spec, pipe, make_target, stop_poll, reuse):
                    reason = "cancelled"
            return await _finish(request, reason, pipe)
    raise AssertionError("unreachable")


def _resolved(request: RunRequest, state: RunState) -> ExperimentPlan:
    """The run's plan: the log's definition when resuming, else the caller's (resolved here if it
    is a spec). Errors name the experiment file, else the run; a resumed run resolves paths where
    it started."""
    given = state.spec if request.resume and state.spec is not None else request.spec
    if given is None:
        raise ValueError(f"run {request.run_id} has no experiment definition in the log")
    own = given.source if isinstance(given, ExperimentPlan) else ""
    request.source = request.source or own or state.source
    label = request.source or f"run {request.run_id}"
    if isinstance(given, ExperimentPlan):
        return given.named(label)
    return resolve(given, label, request.base_dir, request.source)


async def _run_body(
    log: EventStore, request: RunRequest, plan: ExperimentPlan, pipe: Pipeline, reuse: Reuse | None
) -> str:
    run_id, now, state, spec = request.run_id, time.time(), pipe.state, plan.spec
    tuning = plan.tuning
    variants = list(plan.contestants)
    if state.spec is None:
        defined = k.ExperimentDefined(
            run_id=run_id, ts=now, spec=spec, spec_hash=fingerprint(spec), source=request.source,
            warnings=list(plan.warnings),
        )
        await pipe.emit.send(WriteBatch([defined]))
    await propose_variants(run_id=run_id, variants=variants, known=set(state.variants), emit=pipe.emit)
    total = len(variants) * len(spec.cases) * spec.repeat.count
    machine = this_machine()
    started = k.RunStarted(
        run_id=run_id, ts=now, experiment=spec.name, trials_total=total, origin=request.origin,  # type: ignore[arg-type]
        pid=os.getpid(), host=socket.gethostname(), resumed=request.resume, cpu_model=machine[0],
        cpu_cores=machine[1], narrowed_by=list(plan.narrowed_by),
    )  # fmt: skip
    await pipe.write_and_wait([started])
    if request.control.stop_reason is not None:
        return "cancelled"
    await _experiment_setup(spec, request, pipe)
    watch_from = await store_call(log, log.last_seq) + 1
    load_output = functools.partial(_read_output, log)
    reason = "completed"
    with trio.move_on_after(spec.budget.max_wall_time_s or math.inf) as wall:
        async with open_workers(
            log, spec, pipe, request.make_target(), watch_from, request.cancel_poll_s, reuse
        ) as workers:
            # each stopping rule's rounds are imported when a run uses them: a plain run loads none
            if tuning:
                from engine.runtime.tuning.session import tune_session
                from engine.runtime.tuning.tuning_run import TuneRun

                reason = await tune_session(
                    TuneRun(spec, run_id, request.origin, pipe, workers, load_output, request.source, log)
                )
            elif spec.stopping is not None and spec.stopping.rule == "sequential":
                from engine.runtime.sequential_rounds import run_sequential

                reason = await run_sequential(
                    spec, run_id, variants, workers, pipe, load_output, request.base_dir
                )
            elif spec.stopping is not None and spec.stopping.rule == "race":
                from engine.runtime.race_rounds import run_race

                reason = await run_race(spec, run_id, variants, workers, pipe, load_output, request.base_dir)
            else:
                reason = await workers.run(
                    build_plan(spec, run_id, variants, load_output, base_dir=request.base_dir)
                )
    if wall.cancelled_caught:
        reason = "wall_time"
        exhausted = k.BudgetExhausted(
            run_id=run_id, ts=time.time(), budget="max_wall_time_s", limit=spec.budget.max_wall_time_s or 0.0,
            used=round(time.time() - now, 3),
        )  # fmt: skip
        await pipe.emit.send(WriteBatch([exhausted]))
    return reason


async def _experiment_setup(spec: ExperimentSpec, request: RunRequest, pipe: Pipeline) -> None:
    """[setup] commands run once per start, in the experiment file's folder."""
    if not spec.setup:
        return
    try:
        timeout_s = spec.execution.trial_timeout_s or 600.0
        await run_setup(spec.setup, request.base_dir, dict(os.environ), timeout_s)
    except TargetError as exc:
        failed = k.RunCompleted(
            run_id=request.run_id, ts=time.time(), status="failed", message=exc.message[:2000]
        )
        await pipe.write_and_wait([failed])
        raise InputError(request.source or spec.name, "setup", exc.message) from None


def unreachable_message(state: RunState) -> str:
    tally = state.errors.get(("trial", "connect"))
    sample = tally.sample if tally else "connect failed"
    count = tally.count if tally else 0
    return f"target unreachable: {sample} (the first {count} trials all failed to connect)"


def _read_output(log: EventStore, key: str) -> str:
    return read_text(log, key)


async def _finish(request: RunRequest, reason: str, pipe: Pipeline) -> RunReport:
    run_id, now = request.run_id, time.time()
    final: list[k.Event] = []
    if reason == "cancelled":
        why = request.control.stop_reason or "cancel requested"
        if request.control.stop_reason is not None:
            final.append(k.CancelRequested(run_id=run_id, ts=now, reason=why, by="local"))
        final.append(k.RunCancelled(run_id=run_id, ts=now, reason=why))
    status = FINAL_STATUS[reason]
    message = unreachable_message(pipe.state) if reason == "unreachable" else ""
    final.append(k.RunCompleted(run_id=run_id, ts=now, status=status, message=message))  # type: ignore[arg-type]
    await pipe.write_and_wait(final)
    return await pipe.write_report()
