"""What a Ray task carries, both ways: msgpack bytes (msgspec) instead of pickled objects.

Ray pickles a task's arguments and result with cloudpickle, whose reducer hook runs in Python for
every object: for a batch of instant trials that was much of the coordinator's CPU spent
submitting it (benchmarks/README.md#in-code-trials), and the result's unpickling most of the thread that waits
for it. msgspec encodes the same structs in C, and bytes are an argument Ray passes without pickling. A
batch's variants, targets and cases travel once each (tables, by object identity: as pickle's memo did), its
trials by index, and a trial's request without the variant and case it repeats. A result does not carry the
GradeJob's variant and case back either: the coordinator still holds the batch's jobs.

Values of a file's free-form fields (a case's `expected`, `params`, `flags`) arrive as msgpack
gives them back: a TOML date or naive date-time as its ISO string, a tuple as a list, as the log
holds them and a resumed or replayed run reads them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec

from engine.actors.messages import GradeJob, TrialJob, WriteBatch
from engine.actors.targets.target_protocol import TargetRequest
from engine.events.kinds import AnyEvent, GraderResult, TrialCompleted
from engine.events.spec import CaseSpec, GraderSpec, TargetSpec, VariantSpec


@dataclass(slots=True)
class TrialOutcome:
    """A trial's completion or failure (with its blobs) and, when there is an output, what to grade."""

    batch: WriteBatch
    grade_job: GradeJob | None


@dataclass(slots=True)
class BatchOutcome:
    outcomes: list[TrialOutcome]  # in the batch's order
    seconds: float  # the batch's time on the worker


class _Trial(msgspec.Struct, array_like=True):
    """A trial of the batch: its request's fields, but the variant, target and case by index."""

    variant: int  # its target is at the same index of the batch's targets
    case: int
    repeat: int
    prompt: str
    system: str | None
    context: str | None
    model: str | None
    params: dict[str, Any]
    flags: dict[str, Any]
    seed: int
    timeout_s: float
    accept_nonzero_exit: bool
    fingerprint: str = ""  # the job's request fingerprint, logged with its completion by the worker
    keep_workspace: bool = False


class Batch(msgspec.Struct, array_like=True):
    """One task's work: the run's settings the worker needs, the tables, the trials."""

    run_id: str
    base_dir: str | None
    graders: list[GraderSpec]
    pass_threshold: float | None
    variants: list[VariantSpec]
    targets: list[TargetSpec]
    cases: list[CaseSpec]
    trials: list[_Trial]


class _Outcome(msgspec.Struct, array_like=True):
    events: list[AnyEvent]
    blobs: list[tuple[str, bytes]]
    output: str | None = None  # still to grade in the coordinator (its TrialCompleted: events[0])
    precomputed: list[GraderResult | None] | None = None


class _Done(msgspec.Struct, array_like=True):
    outcomes: list[_Outcome]
    seconds: float


_encoder = msgspec.msgpack.Encoder()
_batch_decoder = msgspec.msgpack.Decoder(Batch)
_done_decoder = msgspec.msgpack.Decoder(_Done)


def encode_batch(
    jobs: list[TrialJob], base_dir: str | None, graders: list[GraderSpec], pass_threshold: float | None
) -> bytes:
    variants: dict[tuple[int, int], int] = {}  # (id(variant), id(target)) -> index
    cases: dict[int, int] = {}
    batch = Batch(jobs[0].request.run_id, base_dir, graders, pass_threshold, [], [], [], [])
    for job in jobs:
        variant = variants.setdefault((id(job.variant), id(job.target)), len(batch.variants))
        if variant == len(batch.variants):
            batch.variants.append(job.variant)
            batch.targets.append(job.target)
        case = cases.setdefault(id(job.case), len(batch.cases))
        if case == len(batch.cases):
            batch.cases.append(job.case)
        r = job.request
        batch.trials.append(_Trial(
            variant, case, job.repeat, r.prompt, r.system, r.context, r.model, r.params, r.flags, r.seed,
            r.timeout_s, r.accept_nonzero_exit, job.fingerprint, r.keep_workspace,
        ))  # fmt: skip
    return _encoder.encode(batch)


def decode_batch(data: bytes) -> tuple[Batch, list[TrialJob]]:
    """The batch's settings and its jobs, as the coordinator built them (budget reservations aside:
    they stay in the coordinator)."""
    batch = _batch_decoder.decode(data)
    jobs = []
    for t in batch.trials:
        variant, case = batch.variants[t.variant], batch.cases[t.case]
        request = TargetRequest(
            run_id=batch.run_id, variant=variant, case=case, repeat=t.repeat, prompt=t.prompt,
            system=t.system, context=t.context, model=t.model, params=t.params, flags=t.flags,
            seed=t.seed, timeout_s=t.timeout_s, accept_nonzero_exit=t.accept_nonzero_exit,
            # a worker's workspace never reaches the coordinator's grader: not kept (that grader
            # says the workspace is gone, rather than the worker leaking a folder per trial)
            keep_workspace=False,
        )  # fmt: skip
        target = batch.targets[t.variant]
        jobs.append(TrialJob(variant, case, t.repeat, target, request, fingerprint=t.fingerprint))
    return batch, jobs


def encode_done(done: BatchOutcome) -> bytes:
    wire = [
        _Outcome(o.batch.events, o.batch.blobs)
        if o.grade_job is None
        else _Outcome(o.batch.events, o.batch.blobs, o.grade_job.output, o.grade_job.precomputed)
        for o in done.outcomes
    ]
    return _encoder.encode(_Done(wire, done.seconds))


def decode_done(data: bytes, jobs: list[TrialJob]) -> BatchOutcome:
    """A task's outcomes, in its batch's order, and its time on the worker."""
    done = _done_decoder.decode(data)
    outcomes: list[TrialOutcome] = []
    for job, o in zip(jobs, done.outcomes, strict=True):
        grade = None
        events = list(o.events)
        if o.output is not None:  # a GradeJob's TrialCompleted is the event it logs
            completed = events[0]
            assert isinstance(completed, TrialCompleted), completed
            grade = GradeJob(job.variant, job.case, job.repeat, o.output, completed)
            grade.precomputed = o.precomputed
        outcomes.append(TrialOutcome(WriteBatch(events, o.blobs), grade))
    return BatchOutcome(outcomes, done.seconds)
