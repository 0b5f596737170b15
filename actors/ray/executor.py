"""The Ray executor pool: the executor pool's seam, with trials sent to a Ray cluster as tasks.

The coordinator keeps the scheduler, the budgets, the single log writer and the judges: a task
returns its trials' events and blobs, which go to the log writer as a local worker's would. Ray's
calls block, so each one runs in a thread (the Trio loop never waits on Ray). `size` tasks at most
are in flight (the experiment's `concurrency`): the scheduler's bounded channel does the rest, so the
coordinator's memory stays flat in the number of trials.

A task carries a batch of trials when they are short (`batches`): a task costs the coordinator
CPU whatever it carries, so one trial per task caps cheap trials, coordinator-bound
(benchmarks/README.md#in-code-trials), while a batch divides that cost among its trials. A batch and its
result travel as msgpack bytes (`wire`): the specs once per batch, nothing for cloudpickle to walk; the
result is decoded in the thread that waited for it.

Ray must already be connected (engine.runtime.ray_session). A task whose worker process died is
retried by Ray (`max_retries`); its one result is logged once, and a result for a trial no longer in
flight (a late duplicate) is dropped by its trial key.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import trio

from engine.actors.channels import put
from engine.actors.executor import TargetLimits, durable_start
from engine.actors.messages import GradeJob, TrialJob, TrialKey, WriteBatch
from engine.actors.ray.batches import BatchSizing, cluster_slots, take_batch
from engine.actors.ray.task import run_batch_on_worker
from engine.actors.ray.wire import BatchOutcome, TrialOutcome, decode_done, encode_batch
from engine.events import kinds as k
from engine.events.spec import GraderSpec, RaySpec

CANCEL_GRACE_S = 10.0  # a bound only: a cancelled task normally ends as soon as its agent is killed


@dataclass
class RayWork:
    """What every task of a run shares: where it runs, the graders it runs, the experiment's folder."""

    settings: RaySpec
    graders: list[GraderSpec]
    base_dir: Path | None
    pass_threshold: float | None = None  # given: trials without judges are graded on the workers
    in_flight: set[TrialKey] = field(default_factory=set)

    def remote(self) -> Any:
        import ray

        options: dict[str, Any] = {
            "num_cpus": self.settings.num_cpus,
            "max_retries": self.settings.max_retries,
        }
        if self.settings.resources:
            options["resources"] = dict(self.settings.resources)
        if self.settings.runtime_env:
            options["runtime_env"] = dict(self.settings.runtime_env)
        return ray.remote(run_batch_on_worker).options(**options)


async def ray_executor_pool(
    *,
    size: int,
    jobs: trio.MemoryReceiveChannel[TrialJob],
    emit: trio.MemorySendChannel[WriteBatch],
    graded: trio.MemorySendChannel[GradeJob],
    work: RayWork,
    task_status: trio.TaskStatus[TargetLimits] = trio.TASK_STATUS_IGNORED,
) -> None:
    """`size` submitters, each with one task in flight; returns when `jobs` is closed and drained."""
    remote = work.remote()
    # Ray's blocking waits run in threads: one per task in flight, beyond Trio's default thread limit
    threads = trio.CapacityLimiter(size)
    slots = await trio.to_thread.run_sync(cluster_slots, work.settings.num_cpus)
    sizing = BatchSizing(jobs.statistics().max_buffer_size, slots, size)
    async with jobs, emit, graded, trio.open_nursery() as nursery:
        for _ in range(size):
            submit = partial(_submitter, remote=remote, work=work, threads=threads, sizing=sizing)
            nursery.start_soon(submit, jobs.clone(), emit.clone(), graded.clone())
        task_status.started(TargetLimits(size))


async def _submitter(
    jobs: trio.MemoryReceiveChannel[TrialJob],
    emit: trio.MemorySendChannel[WriteBatch],
    graded: trio.MemorySendChannel[GradeJob],
    *,
    remote: Any,
    work: RayWork,
    threads: trio.CapacityLimiter,
    sizing: BatchSizing,
) -> None:
    async with jobs, emit, graded:
        while True:
            async with sizing.tasks:  # a task's turn first: meanwhile jobs wait in the channel, and batch up
                try:
                    first = await jobs.receive()
                except trio.EndOfChannel:
                    return
                batch = take_batch(jobs, first, sizing.size())
                work.in_flight.update(job.key for job in batch)
                await durable_start(emit, *batch)
                done = await _run_remote(batch, remote, work, threads)
            if done.seconds:
                sizing.observe(done.seconds, len(batch))
            await _hand_on(batch, done, work, emit, graded)


async def _hand_on(
    batch: list[TrialJob],
    done: BatchOutcome,
    work: RayWork,
    emit: trio.MemorySendChannel[WriteBatch],
    graded: trio.MemorySendChannel[GradeJob],
) -> None:
    """A task's trials to the log writer in one write batch (its trials' events in order), and the
    outputs still to judge to the grading pool."""
    events: list[k.Event] = []
    blobs: list[tuple[str, bytes]] = []
    to_grade: list[GradeJob] = []
    for job, outcome in zip(batch, done.outcomes, strict=True):
        if job.key not in work.in_flight:  # a late duplicate: this trial is already logged
            continue
        work.in_flight.discard(job.key)
        events += outcome.batch.events
        blobs += outcome.batch.blobs
        if outcome.grade_job is not None:
            to_grade.append(outcome.grade_job)
    if events:
        await put(emit, WriteBatch(events, blobs))
    for grade_job in to_grade:
        await put(graded, grade_job)


async def _run_remote(
    batch: list[TrialJob], remote: Any, work: RayWork, threads: trio.CapacityLimiter
) -> BatchOutcome:
    import ray

    base_dir = str(work.base_dir) if work.base_dir else None
    ref = remote.remote(encode_batch(batch, base_dir, work.graders, work.pass_threshold))
    try:
        return await trio.to_thread.run_sync(
            lambda: decode_done(ray.get(ref), batch), abandon_on_cancel=True, limiter=threads
        )
    except trio.Cancelled:
        # the run stopped (cancel, signal, budget): the task stops too. A KeyboardInterrupt in the
        # worker's Trio loop kills its agent's process group; wait (bounded) until it has, as the
        # coordinator's disconnecting would kill the worker and orphan the agent
        with trio.CancelScope(shield=True):
            ray.cancel(ref, force=False)
            await trio.to_thread.run_sync(partial(ray.wait, [ref], timeout=CANCEL_GRACE_S))
        raise
    except ray.exceptions.RayError as exc:  # the worker died beyond max_retries, or the task could not run
        return BatchOutcome([TrialOutcome(WriteBatch([_lost(job, exc)]), None) for job in batch], 0.0)


def _lost(job: TrialJob, exc: Exception) -> k.TrialFailed:
    """worker_lost: the worker process (or its node) died more often than max_retries allows;
    worker_error: the task raised on the worker (engine or a module missing there, say)."""
    import ray

    cause = getattr(exc, "cause", None) if isinstance(exc, ray.exceptions.RayTaskError) else None
    shown = cause if isinstance(cause, BaseException) else exc
    lines = [line.strip() for line in str(shown).splitlines() if line.strip()]
    variant, case, repeat = job.key
    return k.TrialFailed(
        run_id=job.request.run_id, ts=time.time(), variant=variant, case=case, repeat=repeat,
        error_kind="infra", message=f"ray: {type(shown).__name__}: {lines[0] if lines else ''}"[:2000],
        attempts=1, latency_ms=0.0, error_class="worker_error" if cause is not None else "worker_lost",
    )  # fmt: skip
