"""`engine regrade RUN_ID`: grade the stored outputs again with another grader config.

A new grading round (RegradeStarted) resets scores in the fold; the grading pool
grades every completed output read back from the blob store, so the subject is
never called again; a new report is written. Replay of the log reproduces it.
"""

from __future__ import annotations

import time
from pathlib import Path

import trio

from engine.actors.executor import MakeTarget
from engine.actors.graders.factory import make_graders
from engine.actors.grading_pool import grading_pool
from engine.actors.messages import GradeJob
from engine.actors.targets.target_maker import target_maker
from engine.events import kinds as k
from engine.events.report import RunReport
from engine.events.spec import GraderSpec
from engine.runtime.pipeline import open_pipeline
from engine.runtime.run_status import run_state
from engine.runtime.workers import grader_context
from engine.store.blobs import read_text
from engine.store.contract import EventStore
from engine.store.projection import run_events
from engine.store.projections.run_state import RunState


async def regrade_run(
    log: EventStore,
    run_id: str,
    graders: list[GraderSpec],
    pass_threshold: float | None = None,
    make_target: MakeTarget | None = None,
    name: str = "",
) -> RunReport:
    """A new, named grading round over the stored outputs; earlier rounds' reports stay readable."""
    folded_to = await trio.to_thread.run_sync(log.last_seq)  # the state loaded after holds that much
    state = await trio.to_thread.run_sync(run_state, log, run_id)
    assert state.spec is not None
    threshold = state.spec.scoring.pass_threshold if pass_threshold is None else pass_threshold
    grading = state.grading + 1
    # python evaluators import from the experiment file's folder, as in the run itself
    folder = Path(state.source).parent if state.source else None
    context = grader_context(state.spec, state, make_target or target_maker(base_dir=folder))
    async with open_pipeline(log, state, folded_to=folded_to) as pipe:
        started = k.RegradeStarted(
            run_id=run_id, ts=time.time(), grading=grading, graders=graders, pass_threshold=threshold,
            name=name or f"grading {grading}",
        )  # fmt: skip
        await pipe.write_and_wait([started])
        grade_send, grade_jobs = trio.open_memory_channel[GradeJob](64)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(
                lambda: grading_pool(
                    size=state.spec.execution.judge_concurrency if state.spec else 3,
                    grade_jobs=grade_jobs,
                    emit=pipe.emit.clone(),
                    make_graders=lambda: make_graders(graders, context),
                    pass_threshold=threshold,
                )
            )
            async with grade_send:
                await _feed_outputs(log, run_id, state, grading, grade_send)
        return await pipe.write_report()
    raise AssertionError("unreachable")


async def _feed_outputs(
    log: EventStore, run_id: str, state: RunState, grading: int, grade_send: trio.MemorySendChannel[GradeJob]
) -> None:
    assert state.spec is not None
    cases = {c.id: c for c in state.spec.cases}
    completed = await trio.to_thread.run_sync(lambda: list(run_events(log, run_id, set(k.OUTPUT_TAGS))))
    seen: set[tuple[str, str, int]] = set()
    for event in completed:
        assert isinstance(event, k.TrialCompleted)
        key = (event.variant, event.case, event.repeat)
        if key in seen or event.variant not in state.variants or event.case not in cases:
            continue
        seen.add(key)
        output = await trio.to_thread.run_sync(read_text, log, event.output_hash) or ""
        job = GradeJob(state.variants[event.variant], cases[event.case], event.repeat, output, event, grading)
        await grade_send.send(job)
