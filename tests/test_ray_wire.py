"""A Ray task's batch and result as msgpack bytes: what the worker and the coordinator decode is what
the other side had (no cluster needed: the wire is plain msgspec; the real tasks are in
test_ray_backend)."""

from __future__ import annotations

import time
from functools import cache
from pathlib import Path
from typing import Any

import msgspec
from hypothesis import example, given, settings
from hypothesis import strategies as st

from engine import spec_from_dict
from engine.actors.messages import GradeJob, TrialJob, WriteBatch
from engine.actors.ray.wire import (
    BatchOutcome,
    TrialOutcome,
    _Trial,
    decode_batch,
    decode_done,
    encode_batch,
    encode_done,
)
from engine.actors.targets.target_protocol import TargetRequest
from engine.events import kinds as k
from engine.input.experiment_plan import resolve
from engine.runtime.plan import build_plan

EXPERIMENT = {
    "name": "wire", "target": {"kind": "local"}, "params": {"max_tokens": 8, "temperature": 0.5},
    "variants": [
        {"name": "plain"},
        {"name": "templated", "prompt_template": "Q: {prompt}", "system": "be brief",
         "params": {"top_p": 0.9}, "flags": {"fast": True}},
    ],
    "cases": [
        {"id": "a", "prompt": "What is 1?", "expected": {"any": [1, "one", None, 2.5]}, "context": "ctx"},
        {"id": "b", "prompt": "What is 2?", "expected": "two"},
    ],
    "graders": [{"kind": "contains"}],
}  # fmt: skip


@cache
def jobs_of_a_plan() -> list[TrialJob]:
    plan = resolve(spec_from_dict(EXPERIMENT), "exp.toml", Path.cwd())
    built = build_plan(plan.spec, "run-1", list(plan.variants), lambda _: "")
    return [built.make_job(v, c, r) for v in plan.variants for c in plan.spec.cases for r in (0, 1)]


def test_a_batch_decodes_to_the_jobs_the_coordinator_built() -> None:
    jobs = jobs_of_a_plan()
    graders = list(spec_from_dict(EXPERIMENT).graders)
    batch, decoded = decode_batch(encode_batch(jobs, "/tmp/exp", graders, 0.5))
    assert decoded == jobs
    assert (batch.base_dir, batch.graders, batch.pass_threshold) == ("/tmp/exp", graders, 0.5)
    assert len(batch.variants) == 2 and len(batch.cases) == 2  # each travels once, not per trial
    assert decoded[0].variant is decoded[1].variant is decoded[0].request.variant


def test_a_trial_on_the_wire_carries_every_field_of_its_request() -> None:
    by_reference = {"run_id", "variant", "case", "repeat"}  # the batch's, or the trial's own
    job_own = {"fingerprint"}  # the job's request fingerprint, not a field of the request
    on_the_wire = set(_Trial.__struct_fields__) - by_reference - job_own
    assert set(TargetRequest.__struct_fields__) - by_reference == on_the_wire


def test_a_result_decodes_to_the_outcomes_the_worker_made_with_the_coordinators_specs() -> None:
    jobs = jobs_of_a_plan()[:3]
    run, now = "run-1", time.time()
    completed = k.TrialCompleted(
        run_id=run, ts=now, variant="plain", case="a", repeat=0, output_hash="h1", latency_ms=1.5,
        tokens_in=3, tokens_out=4, cost_usd=0.25, attempts=1,
    )  # fmt: skip
    graded = k.TrialGraded(run_id=run, ts=now, variant="plain", case="a", repeat=1, passed=True, score=1.0)
    failed = k.TrialFailed(
        run_id=run, ts=now, variant="plain", case="b", repeat=0, error_kind="infra", message="x",
        attempts=2, latency_ms=0.0, error_class="timeout",
    )  # fmt: skip
    to_grade = GradeJob(jobs[0].variant, jobs[0].case, 0, "the output", completed)
    to_grade.precomputed = [k.GraderResult(name="contains", passed=True, score=1.0), None]
    sent = BatchOutcome(
        [
            TrialOutcome(WriteBatch([completed], [("h1", b"\x00blob")]), to_grade),
            TrialOutcome(WriteBatch([msgspec.structs.replace(completed, repeat=1), graded]), None),
            TrialOutcome(WriteBatch([failed]), None),
        ],
        0.125,
    )
    got = decode_done(encode_done(sent), jobs)
    assert got == sent
    assert got.outcomes[0].grade_job is not None
    assert got.outcomes[0].grade_job.completed is got.outcomes[0].batch.events[0]
    assert got.outcomes[0].grade_job.case is jobs[0].case  # the coordinator's own spec


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


@given(
    expected=JSON,
    params=st.dictionaries(st.text(max_size=5), JSON, max_size=3),
    context=st.none() | st.text(),
)
@example(expected={"": [None, -(2**63), 1e308, ""]}, params={"x": {"y": [True]}}, context="")
@settings(max_examples=60, deadline=None)
def test_any_case_and_params_a_file_can_hold_travel_unchanged(
    expected: Any, params: Any, context: Any
) -> None:
    first = jobs_of_a_plan()[0]
    case = msgspec.structs.replace(first.case, expected=expected, context=context)
    request = msgspec.structs.replace(first.request, case=case, params=params, context=context)
    job = TrialJob(first.variant, case, first.repeat, first.target, request)
    assert decode_batch(encode_batch([job, job], None, [], None))[1] == [job, job]
