"""The pairwise round: after a run's trials, each `kind = "pairwise"` grader judges every candidate
trial against the baseline's trial of the same case and repeat, one PairwiseJudged event each.

It runs once both outputs exist, so no trial waits on another; a resumed run judges only the pairs
the log has no verdict for (nothing twice). The judges share the run's judge-token budget.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

import trio

from engine.actors.executor import MakeTarget
from engine.actors.graders.pairwise import Pair, PairwiseJudge
from engine.actors.messages import StopRequested, WriteBatch
from engine.actors.watcher import watch_for_cancel
from engine.events import kinds as k
from engine.events.graders import GRADERS
from engine.events.spec import CaseSpec, ExperimentSpec
from engine.runtime.pipeline import Pipeline
from engine.runtime.plan import trial_seed
from engine.runtime.reuse import Reuse
from engine.runtime.workers import grader_context
from engine.store.blobs import read_text
from engine.store.contract import EventStore, store_call
from engine.store.projection import run_events

Trial = tuple[str, str, int]  # (variant, case, repeat)


async def pairwise_unless_stopped(
    log: EventStore,
    spec: ExperimentSpec,
    pipe: Pipeline,
    make_target: MakeTarget,
    poll_s: float,
    reuse: Reuse | None = None,
) -> bool:
    """The pairwise round, stopped by a stop of the run (a signal, the embedding API) or a cancel
    from another process, like the trials before it: True when it was stopped (verdicts logged
    so far are kept, and a resume judges the rest)."""
    if not any(GRADERS.of(g).pairwise for g in spec.graders):
        return False
    stopped = False
    from_seq = await store_call(log, log.last_seq) + 1
    async with trio.open_nursery() as nursery:

        async def stop_on_request() -> None:
            nonlocal stopped
            async for message in pipe.feedback:
                if isinstance(message, StopRequested):
                    stopped = True
                    nursery.cancel_scope.cancel()

        watch = partial(watch_for_cancel, log=log, run_id=pipe.state.run_id, from_seq=from_seq,
                        feedback=pipe.feedback_send.clone(), poll_s=poll_s)  # fmt: skip
        nursery.start_soon(stop_on_request)
        await nursery.start(watch)
        await pairwise_round(log, spec, pipe, make_target, reuse)
        nursery.cancel_scope.cancel()
    return stopped


async def pairwise_round(
    log: EventStore, spec: ExperimentSpec, pipe: Pipeline, make_target: MakeTarget, reuse: Reuse | None = None
) -> None:
    graders = [g for g in spec.graders if GRADERS.of(g).pairwise]
    variants = list(pipe.state.variants)
    if not graders or len(variants) < 2:
        return
    outputs, judged = await trio.to_thread.run_sync(_read_log, log, pipe.state.run_id)
    context = grader_context(spec, pipe.state, make_target)
    assert context.make_target is not None
    limiter = trio.CapacityLimiter(spec.execution.judge_concurrency)
    for grader in graders:
        judge = PairwiseJudge.build(grader, spec.target, context.make_target, context.budget)
        judge.reuse = reuse.find_verdict if reuse is not None else None
        round_ = _Round(log, spec, pipe, judge, grader.baseline or variants[0], outputs)
        try:
            async with trio.open_nursery() as nursery:
                for trial in round_.todo(judged):
                    nursery.start_soon(round_.judge_one, trial, limiter)
        finally:
            with trio.CancelScope(shield=True):
                await judge.aclose()


@dataclass
class _Round:
    log: EventStore
    spec: ExperimentSpec
    pipe: Pipeline
    judge: PairwiseJudge
    baseline: str
    outputs: dict[Trial, str]
    cases: dict[str, CaseSpec] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.cases = {c.id: c for c in self.spec.cases}

    def todo(self, judged: set[tuple[str, str, str, int]]) -> list[Trial]:
        """Candidate trials whose baseline twin has an output too, and no verdict yet."""
        return [
            (variant, case, repeat)
            for (variant, case, repeat) in self.outputs
            if variant != self.baseline and case in self.cases
            and (self.baseline, case, repeat) in self.outputs
            and (self.judge.name, variant, case, repeat) not in judged
        ]  # fmt: skip

    async def judge_one(self, trial: Trial, limiter: trio.CapacityLimiter) -> None:
        variant, case_id, repeat = trial
        case = self.cases[case_id]
        async with limiter:  # outputs read here, a few at a time: memory stays flat in the run's size
            candidate = read_text(self.log, self.outputs[trial])
            base = read_text(self.log, self.outputs[(self.baseline, case_id, repeat)])
            seed = trial_seed(self.spec.seed, variant, case_id, repeat)
            pair = Pair(self.pipe.state.run_id, variant, self.baseline, case, repeat, seed, candidate, base)
            event = await self.judge.judge(pair)
        await self.pipe.emit.send(WriteBatch([event]))


def _read_log(log: EventStore, run_id: str) -> tuple[dict[Trial, str], set[tuple[str, str, str, int]]]:
    """Every completed trial's output (the first result of a trial counts) and the verdicts logged."""
    outputs: dict[Trial, str] = {}
    judged: set[tuple[str, str, str, int]] = set()
    for event in run_events(log, run_id, {*k.OUTPUT_TAGS, "pairwise.judged"}):
        if isinstance(event, k.TrialCompleted):
            outputs.setdefault((event.variant, event.case, event.repeat), event.output_hash)
        elif isinstance(event, k.PairwiseJudged):
            judged.add((event.grader, event.variant, event.case, event.repeat))
    return outputs, judged
