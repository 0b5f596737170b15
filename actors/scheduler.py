"""The scheduler: turns a plan (variants x cases x repeats) into jobs, within limits.

It keeps at most `limits.in_flight` trials outstanding, orders trials repeat by
repeat across all variants (so a run cut short by a budget stays balanced), and
for pass_at_k with early exit runs a cell's next repeat only after the previous
one failed, which makes the set of trials run the same on every run and resume.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import trio

from engine.actors.channels import put
from engine.actors.messages import Feedback, GradeJob, StopRequested, TrialJob, TrialKey, WriteBatch
from engine.actors.reservations import Stop
from engine.actors.schedule_book import Book, Limits, Plan, Slot
from engine.events import kinds as k
from engine.store.projections.run_state import RunState

__all__ = ["Limits", "Plan", "Scheduler", "SchedulerStatistics", "Slot"]
EARLY_EXIT = "early exit: an earlier repeat passed"


@dataclass(frozen=True)
class SchedulerStatistics:
    outstanding: int  # trials sent and not yet final
    executed: int  # trials the subject was (or is being) called for, this run included
    chained: int  # pass_at_k repeats waiting for their turn
    exhausted: str | None  # the budget that stopped new trials, if one did


class Scheduler:
    """One plan's scheduling; `statistics()` answers while `run()` goes (trio's idiom)."""

    def __init__(
        self,
        *,
        plan: Plan,
        state: RunState,
        limits: Limits,
        jobs: trio.MemorySendChannel[TrialJob],
        grade_jobs: trio.MemorySendChannel[GradeJob],
        feedback: trio.MemoryReceiveChannel[Feedback],
        emit: trio.MemorySendChannel[WriteBatch],
    ) -> None:
        self.book = Book(plan, state, limits)
        self._jobs, self._grade_jobs, self._feedback, self._emit = jobs, grade_jobs, feedback, emit

    def statistics(self) -> SchedulerStatistics:
        b = self.book
        return SchedulerStatistics(len(b.outstanding), b.executed, len(b.chained), b.exhausted)

    async def run(self) -> str:
        """Run the plan; returns why it stopped: 'completed', 'budget', 'cancelled' or 'unreachable'."""
        book = self.book
        await self._skip_after_passes()
        await self._regrade_leftovers()
        while True:
            if book.exhausted is None:
                await self._fill()
            if not book.outstanding:
                return "budget" if book.exhausted else "completed"
            message = await self._feedback.receive()
            while True:  # everything that has come in, before the next fill: one turn, not one each
                stop = await self._take(message)
                if stop is not None:
                    return stop
                try:
                    message = self._feedback.receive_nowait()
                except trio.WouldBlock:
                    break

    async def _take(self, message: Feedback) -> str | None:
        """Account for one message; why the plan stops, if it does."""
        book = self.book
        if isinstance(message, StopRequested):
            return "cancelled"
        if message.key in book.outstanding:
            book.outstanding.discard(message.key)
            book.reservations.release(message.key)
            if book.unreachable(message):
                return "unreachable"
            await self._after_done(message.key, message.passed)
        return None

    async def _skip_after_passes(self) -> None:
        """pass_at_k: a cell that passed before a crash may still lack the skip events of later repeats."""
        plan, state = self.book.plan, self.book.state
        if not plan.early_exit:
            return
        names, cases = {v.name for v in plan.variants}, {c.id for c in plan.cases}
        skipped = [
            self._skip(variant, case, r)
            for variant, case, after in state.passed_cells()
            if variant in names and case in cases
            for r in range(after, plan.repeats)
            if not state.taken(variant, case) >> r & 1
        ]
        if skipped:
            await self._write_skips(skipped)

    def _skip(self, variant: str, case: str, repeat: int) -> k.Event:
        return k.TrialSkipped(
            run_id=self.book.plan.run_id, ts=time.time(), variant=variant, case=case, repeat=repeat,
            reason=EARLY_EXIT,
        )  # fmt: skip

    async def _write_skips(self, skipped: list[k.Event]) -> None:
        """Skips are folded before the scheduler goes on: the next plan of a session (a tuning round,
        a sequential look) then sees those repeats as taken and never skips them twice."""
        folded = trio.Event()
        await self._emit.send(WriteBatch(skipped, [], folded))
        await folded.wait()

    async def _regrade_leftovers(self) -> None:
        """Outputs completed before a crash but never graded: grade them, don't call the subject again."""
        book = self.book
        names = {v.name for v in book.plan.variants}
        for key, completed in list(book.state.awaiting_grade.items()):
            if key[0] in names and key not in book.outstanding:
                book.outstanding.add(key)
                await self._grade_jobs.send(book.plan.load_regrade(completed))

    async def _fill(self) -> None:
        book = self.book
        while len(book.outstanding) < book.limits.in_flight:
            slot = book.next_slot()
            if slot is None:
                return
            job = book.plan.make_job(*slot)
            reused = book.plan.reuse(job) if book.plan.reuse is not None else None
            if reused is not None:  # not sent: no budget holds or counts it (it is one sample all the same)
                book.outstanding.add(job.key)
                await self._take_reused(job, *reused)
                continue
            budget = book.over_budget()
            if budget is not None:
                book.put_back(slot)
                await self._exhausted(Stop(*budget, reserved=0.0))
                return
            if book.reservations.active:
                decided = book.reservations.decide(job, len(book.outstanding))
                if decided is not None:
                    book.put_back(slot)
                    if isinstance(decided, Stop):  # below the limit, but the next trial may not fit
                        await self._exhausted(decided)
                    return
                job.reserved = book.reservations.hold(job)
            job.budgeted = book.limits.budgeted
            book.outstanding.add(job.key)
            book.executed += 1
            await put(self._jobs, job)

    async def _take_reused(self, trial: TrialJob, reused: k.TrialReused, output: str) -> None:
        """Log the reuse, then grade its output with this run's graders (the reuse first in the log: a
        crash between the two leaves an output awaiting its grade, graded on resume, never reused twice)."""
        plan = self.book.plan
        job = GradeJob(trial.variant, trial.case, trial.repeat, output, reused)
        if plan.grade_reused is not None:  # one write, as an executor's inline grading makes
            await put(self._emit, WriteBatch([reused, await plan.grade_reused(job)]))
            return
        await put(self._emit, WriteBatch([reused]))
        await put(self._grade_jobs, job)

    async def _exhausted(self, stop: Stop) -> None:
        self.book.exhausted = stop.budget
        event = k.BudgetExhausted(
            run_id=self.book.plan.run_id, ts=time.time(), budget=stop.budget, limit=stop.limit,
            used=stop.used, reserved=stop.reserved,
        )  # fmt: skip
        await self._emit.send(WriteBatch([event]))

    async def _after_done(self, key: TrialKey, passed: bool | None) -> None:
        book = self.book
        if not book.plan.early_exit:
            return
        variant, case, repeat = key
        if passed:
            skipped = [self._skip(variant, case, r) for r in range(repeat + 1, book.plan.repeats)]
            if skipped:
                await self._write_skips(skipped)
            return
        book.chain_after_failure(key)
