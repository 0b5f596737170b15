"""The scheduler: turns a plan (variants x cases x repeats) into jobs, within limits.

It keeps at most `limits.in_flight` trials outstanding, orders trials repeat by
repeat across all variants (so a run cut short by a budget stays balanced), and
for pass_at_k with early exit runs a cell's next repeat only after the previous
one failed, which makes the set of trials run the same on every run and resume.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import trio

from engine.actors.messages import (
    Feedback,
    GradeJob,
    StopRequested,
    TrialDone,
    TrialJob,
    TrialKey,
    WriteBatch,
)
from engine.events import kinds as k
from engine.events.spec import CaseSpec, VariantSpec
from engine.store.projections.run_state import RunState

Slot = tuple[VariantSpec, CaseSpec, int]


@dataclass(slots=True)
class Plan:
    run_id: str
    variants: list[VariantSpec]
    cases: list[CaseSpec]
    repeats: int
    early_exit: bool  # pass_at_k: stop a cell's repeats at its first pass
    make_job: Callable[[VariantSpec, CaseSpec, int], TrialJob]
    load_regrade: Callable[[k.TrialCompleted], GradeJob]


@dataclass(slots=True)
class Limits:
    in_flight: int
    max_trials: int | None = None
    max_tokens: int | None = None
    max_cost_usd: float | None = None
    # the first N finished trials all failed to connect: the target is unreachable (0: never stop)
    unreachable_after: int = 0


class _Run:
    """The scheduler's bookkeeping for one plan."""

    def __init__(self, plan: Plan, state: RunState, limits: Limits) -> None:
        self.plan, self.state, self.limits = plan, state, limits
        self.outstanding: set[TrialKey] = set()
        self.chained: deque[Slot] = deque()
        self.executed = state.trials_executed()
        self.exhausted: str | None = None
        self.pending = self._pending()
        self.connect_failures = 0
        self.reached = False  # some trial got past connecting: the target is there

    def unreachable(self, message: TrialDone) -> bool:
        """Count connect failures until the first trial that got further; True once they reach the bar."""
        if message.error_class == "connect" and not self.reached:
            self.connect_failures += 1
        elif message.passed is not None or message.error_class:
            self.reached = True
        bar = self.limits.unreachable_after
        return bool(bar) and not self.reached and self.connect_failures >= bar

    def _pending(self) -> Iterator[Slot]:
        plan = self.plan
        first_round = range(1) if plan.early_exit else range(plan.repeats)
        for r in first_round:
            for case in plan.cases:
                for variant in plan.variants:
                    slot = self._next_slot(variant, case) if plan.early_exit else (variant, case, r)
                    if slot is not None and not self._is_taken(slot):
                        yield slot

    def _next_slot(self, variant: VariantSpec, case: CaseSpec) -> Slot | None:
        if self.state.has_passed(variant.name, case.id):
            return None
        done = self.state.taken(variant.name, case.id)
        for r in range(self.plan.repeats):
            if not done >> r & 1:
                return (variant, case, r)
        return None

    def _is_taken(self, slot: Slot) -> bool:
        return bool(self.state.taken(slot[0].name, slot[1].id) >> slot[2] & 1)

    def next_slot(self) -> Slot | None:
        if self.chained:
            return self.chained.popleft()
        return next(self.pending, None)

    def over_budget(self) -> tuple[str, float, float] | None:
        s, lim = self.state, self.limits
        if lim.max_trials is not None and self.executed >= lim.max_trials:
            return ("max_trials", lim.max_trials, self.executed)
        if lim.max_tokens is not None and s.tokens_used >= lim.max_tokens:
            return ("max_tokens", lim.max_tokens, s.tokens_used)
        if lim.max_cost_usd is not None and self.cost_room() == "exhausted":
            return ("max_cost_usd", lim.max_cost_usd, s.cost_spent())
        return None

    def cost_room(self) -> str:
        """'ok', 'wait' or 'exhausted' for one more trial under max_cost_usd.

        Concurrent trials each reserve the mean cost observed so far before they
        start; the reservation settles when they finish (their real cost is then
        in the state). Before any cost is known, one trial at a time probes it.
        """
        limit = self.limits.max_cost_usd
        if limit is None:
            return "ok"
        spent = self.state.cost_spent()
        if spent >= limit:
            return "exhausted"
        finished = self.state.trials_executed()
        in_flight = len(self.outstanding)
        if finished == 0:
            return "ok" if in_flight == 0 else "wait"
        mean = spent / finished
        if spent + (in_flight + 1) * mean <= limit:
            return "ok"
        return "wait" if in_flight else "exhausted"


async def scheduler(
    *,
    plan: Plan,
    state: RunState,
    limits: Limits,
    jobs: trio.MemorySendChannel[TrialJob],
    grade_jobs: trio.MemorySendChannel[GradeJob],
    feedback: trio.MemoryReceiveChannel[Feedback],
    emit: trio.MemorySendChannel[WriteBatch],
) -> str:
    """Run the plan; returns why it stopped: 'completed', 'budget', 'cancelled' or 'unreachable'."""
    run = _Run(plan, state, limits)
    await _skip_after_passes(run, emit)
    await _regrade_leftovers(run, grade_jobs)
    while True:
        if run.exhausted is None:
            await _fill(run, jobs, emit)
        if not run.outstanding:
            return "budget" if run.exhausted else "completed"
        message = await feedback.receive()
        if isinstance(message, StopRequested):
            return "cancelled"
        if message.key in run.outstanding:
            run.outstanding.discard(message.key)
            if run.unreachable(message):
                return "unreachable"
            await _after_done(run, message.key, message.passed, emit)


async def _skip_after_passes(run: _Run, emit: trio.MemorySendChannel[WriteBatch]) -> None:
    """pass_at_k: a cell that passed before a crash may still lack the skip events of its later repeats."""
    if not run.plan.early_exit:
        return
    names, cases = {v.name for v in run.plan.variants}, {c.id for c in run.plan.cases}
    skipped = [
        k.TrialSkipped(run_id=run.plan.run_id, ts=time.time(), variant=variant, case=case, repeat=r,
                       reason="early exit: an earlier repeat passed")
        for variant, case, after in run.state.passed_cells()
        if variant in names and case in cases
        for r in range(after, run.plan.repeats)
        if not run.state.taken(variant, case) >> r & 1
    ]  # fmt: skip
    if skipped:
        await emit.send(WriteBatch(list(skipped)))


async def _regrade_leftovers(run: _Run, grade_jobs: trio.MemorySendChannel[GradeJob]) -> None:
    """Outputs completed before a crash but never graded: grade them, don't call the subject again."""
    names = {v.name for v in run.plan.variants}
    for key, completed in list(run.state.awaiting_grade.items()):
        if key[0] in names and key not in run.outstanding:
            run.outstanding.add(key)
            await grade_jobs.send(run.plan.load_regrade(completed))


async def _fill(
    run: _Run, jobs: trio.MemorySendChannel[TrialJob], emit: trio.MemorySendChannel[WriteBatch]
) -> None:
    while len(run.outstanding) < run.limits.in_flight:
        budget = run.over_budget()
        if budget is not None:
            run.exhausted = budget[0]
            event = k.BudgetExhausted(
                run_id=run.plan.run_id, ts=time.time(), budget=budget[0], limit=budget[1], used=budget[2]
            )
            await emit.send(WriteBatch([event]))
            return
        if run.cost_room() == "wait":
            return  # in-flight trials hold the remaining budget; decide again when one settles
        slot = run.next_slot()
        if slot is None:
            return
        job = run.plan.make_job(*slot)
        run.outstanding.add(job.key)
        run.executed += 1
        await jobs.send(job)


async def _after_done(
    run: _Run, key: TrialKey, passed: bool | None, emit: trio.MemorySendChannel[WriteBatch]
) -> None:
    if not run.plan.early_exit:
        return
    variant_name, case_id, repeat = key
    variant = next(v for v in run.plan.variants if v.name == variant_name)
    case = next(c for c in run.plan.cases if c.id == case_id)
    if passed:
        skipped = [
            k.TrialSkipped(
                run_id=run.plan.run_id,
                ts=time.time(),
                variant=variant_name,
                case=case_id,
                repeat=r,
                reason="early exit: an earlier repeat passed",
            )
            for r in range(repeat + 1, run.plan.repeats)
        ]
        if skipped:
            await emit.send(WriteBatch(list(skipped)))
        return
    slot = run._next_slot(variant, case)
    if slot is not None:
        run.chained.append(slot)
