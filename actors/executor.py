"""The executor pool: workers that call the target for each trial job.

Each worker owns its targets (one HTTP client per worker: a
shared client collapses under concurrency). Outputs go to the blob store with
the completion event in the same write batch, then on to the grading pool.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import msgspec
import trio

from engine.actors.channels import put, take
from engine.actors.graders.grader_protocol import Grader
from engine.actors.grading_pool import grade_cheap
from engine.actors.inline_grading import InlineGrading
from engine.actors.messages import GradeJob, TrialJob, WriteBatch
from engine.actors.secrets import redact
from engine.actors.targets.adaptive import AdaptiveLimit, LimitStatistics
from engine.actors.targets.retry import call_with_retries
from engine.actors.targets.target_protocol import Target, TargetError, check_response
from engine.events import kinds as k
from engine.events.spec import TargetSpec
from engine.store.blobs import pack_blob

MakeTarget = Callable[[TargetSpec], Target]


async def executor_pool(
    *,
    size: int,
    jobs: trio.MemoryReceiveChannel[TrialJob],
    emit: trio.MemorySendChannel[WriteBatch],
    graded: trio.MemorySendChannel[GradeJob],
    make_target: MakeTarget,
    grading: InlineGrading | None = None,
    task_status: trio.TaskStatus[TargetLimits] = trio.TASK_STATUS_IGNORED,
) -> None:
    """`size` workers; returns (closing its channels) when `jobs` is closed and drained. Started, it
    hands back the per-target limits (their statistics() say how each target is coping). With
    `grading`, each worker grades its outputs itself (actors.inline_grading)."""
    limits = TargetLimits(size)
    async with jobs, emit, graded, trio.open_nursery() as nursery:
        for _ in range(size):
            nursery.start_soon(
                executor_worker, jobs.clone(), emit.clone(), graded.clone(), make_target, limits, grading
            )
        task_status.started(limits)


class TargetLimits:
    """One adaptive concurrency limit per target, shared by all workers of the pool."""

    def __init__(self, pool_size: int) -> None:
        self.pool_size = pool_size
        self._limits: dict[bytes, AdaptiveLimit] = {}
        self._by_spec: dict[bytes, tuple[TargetSpec, AdaptiveLimit]] = {}

    def statistics(self) -> dict[str, LimitStatistics]:
        """Per target (by kind and model): its current limit and how many calls use or wait for it."""
        by_spec = self._by_spec.values()
        return {f"{spec.kind}:{spec.model or ''}": limit.statistics() for spec, limit in by_spec}

    def for_target(self, spec: TargetSpec) -> AdaptiveLimit:
        key = msgspec.msgpack.encode(spec)
        found = self._limits.get(key)
        if found is None:
            found = self._limits[key] = AdaptiveLimit(min(spec.concurrency or self.pool_size, self.pool_size))
            self._by_spec[key] = (spec, found)
        return found


async def executor_worker(
    jobs: trio.MemoryReceiveChannel[TrialJob],
    emit: trio.MemorySendChannel[WriteBatch],
    graded: trio.MemorySendChannel[GradeJob],
    make_target: MakeTarget,
    limits: TargetLimits,
    grading: InlineGrading | None = None,
) -> None:
    targets: dict[bytes, Target] = {}
    graders = grading.make_graders() if grading is not None else []
    grade = _Grade(graded, graders, grading.pass_threshold if grading is not None else 0.0)
    try:
        async with jobs, emit, graded:
            while (job := await take(jobs)) is not None:
                try:
                    target = target_for(targets, job.target, make_target)
                except TargetError as exc:  # e.g. an API key variable unset since the run was checked
                    await emit.send(WriteBatch([failure(job, exc, 0.0)]))
                    continue
                await run_trial(job, target, emit, grade, limits.for_target(job.target))
    finally:
        with trio.CancelScope(shield=True):
            for target in targets.values():
                await target.aclose()
            for grader in graders:
                await grader.aclose()


class _Grade:
    """Where a worker's outputs are graded: by its own graders (inline) or by the grading pool."""

    def __init__(
        self, pool: trio.MemorySendChannel[GradeJob], graders: list[Grader], threshold: float
    ) -> None:
        self.pool, self.graders, self.threshold = pool, graders, threshold

    async def __call__(
        self, emit: trio.MemorySendChannel[WriteBatch], batch: WriteBatch, job: GradeJob | None
    ) -> None:
        if job is not None and self.graders:  # graded in the same batch as the output: one write
            batch.events.append(await grade_cheap(job, self.graders, self.threshold))
            job = None
        await put(emit, batch)
        if job is not None:
            await put(self.pool, job)


def failure(job: TrialJob, exc: TargetError, latency_ms: float) -> k.TrialFailed:
    variant, case, repeat = job.key
    return k.TrialFailed(
        run_id=job.request.run_id, ts=time.time(), variant=variant, case=case, repeat=repeat,
        error_kind=exc.kind, message=redact(exc.message)[:2000], attempts=exc.attempts, latency_ms=latency_ms,
        error_class=exc.error_class, exit_code=exc.agent_exit_code,
    )  # fmt: skip


def target_for(cache: dict[bytes, Target], spec: TargetSpec, make_target: MakeTarget) -> Target:
    key = msgspec.msgpack.encode(spec)
    target = cache.get(key)
    if target is None:
        target = cache[key] = make_target(spec)
    return target


async def run_trial(
    job: TrialJob,
    target: Target,
    emit: trio.MemorySendChannel[WriteBatch],
    grade: _Grade,
    limit: AdaptiveLimit | None = None,
) -> None:
    await durable_start(emit, job)
    batch, grade_job = await call_trial(job, target, limit)
    await grade(emit, batch, grade_job)


async def durable_start(emit: trio.MemorySendChannel[WriteBatch], *jobs: TrialJob) -> None:
    """Under a budget the start, with the spend reserved for the trial, is in the log before the
    subject is called: after a crash a resumed run counts what may have been served, never less.
    Without one nothing counts it, and the start need not wait for its commit. Several trials sent
    together (a Ray batch) start in one write, waited for once."""
    starts: list[k.Event] = [started_event(job) for job in jobs]
    if not any(job.budgeted for job in jobs):
        await put(emit, WriteBatch(starts))
        return
    folded = trio.Event()
    await emit.send(WriteBatch(starts, folded=folded))
    await folded.wait()


def started_event(job: TrialJob) -> k.TrialStarted:
    variant, case, repeat = job.key
    return k.TrialStarted(
        run_id=job.request.run_id, ts=time.time(), variant=variant, case=case, repeat=repeat,
        reserved_tokens=job.reserved[0], reserved_cost=job.reserved[1],
    )  # fmt: skip


async def call_trial(
    job: TrialJob, target: Target, limit: AdaptiveLimit | None = None
) -> tuple[WriteBatch, GradeJob | None]:
    """Call the subject for one trial: its completion (with the output's blobs) or its failure, and the
    output to grade. No channel: a Ray worker runs this too and hands the result back to the coordinator."""
    run_id, (variant, case, repeat) = job.request.run_id, job.key
    started = trio.current_time()
    try:
        response = await call_with_retries(
            target, job.request, max_retries=job.target.max_retries, rng=job.request.seed, limit=limit,
            retry_on=job.target.retry_on,
        )  # fmt: skip
        if not response.cost_usd and job.target.price is not None:  # an agent may report its own cost
            response.cost_usd = job.target.price.cost(response.tokens_in, response.tokens_out)
        check_response(response)
    except TargetError as exc:
        return WriteBatch([failure(job, exc, round((trio.current_time() - started) * 1000, 3))]), None
    response.text, response.stderr = redact(response.text), redact(response.stderr)
    key, stored = pack_blob(response.text.encode())
    blobs = [(key, stored)]
    stderr_key = _extra_blob(blobs, response.stderr)
    transcript_key = _extra_blob(blobs, redact(response.transcript))
    services = {name: _extra_blob(blobs, redact(log)) for name, log in response.service_logs.items() if log}
    streamed = response.ttft_ms is not None
    agent_record = stderr_key or transcript_key or response.metrics or services or streamed
    completed = k.TrialCompleted(
        run_id=run_id, ts=time.time(), variant=variant, case=case, repeat=repeat, output_hash=key,
        latency_ms=round((trio.current_time() - started) * 1000, 3), tokens_in=response.tokens_in,
        tokens_out=response.tokens_out, cost_usd=response.cost_usd, exit_code=response.exit_code,
        attempts=response.attempts, fingerprint=job.fingerprint,
        agent=k.AgentReport(
            stderr_hash=stderr_key, metrics=response.metrics, transcript_hash=transcript_key,
            tools=response.tools, services=services,
            ttft_ms=response.ttft_ms, tokens_per_s=response.tokens_per_s,
        ) if agent_record else None,
    )  # fmt: skip
    grade_job = GradeJob(job.variant, job.case, repeat, response.text, completed,
                         workspace=response.workspace, workspace_owned=response.workspace_owned)  # fmt: skip
    return WriteBatch([completed], blobs), grade_job


def _extra_blob(blobs: list[tuple[str, bytes]], text: str) -> str:
    """An agent's stderr or transcript stored next to the output: its key, or "" when there is none."""
    if not text:
        return ""
    key, stored = pack_blob(text.encode())
    blobs.append((key, stored))
    return key
