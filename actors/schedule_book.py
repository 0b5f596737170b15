"""The scheduler's bookkeeping for one plan: what is outstanding, what comes next, what the budgets
still allow. Pure bookkeeping (no channels): the scheduler actor drives it."""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass

from engine.actors.messages import GradeJob, TrialDone, TrialJob, TrialKey
from engine.actors.reservations import Reservations
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
    # the earlier output a job may take instead of being sent (engine.runtime.reuse), or None
    reuse: Callable[[TrialJob], tuple[k.TrialReused, str] | None] | None = None
    # cheap graders only: a reused output graded where it is found, in the reuse's own write
    grade_reused: Callable[[GradeJob], Awaitable[k.TrialGraded]] | None = None
    # the cases by id, made when first asked for (a resumed or budgeted run's schedule asks; most
    # runs never do: 4.7 MiB at 100,000 cases)
    case_by_id: dict[str, CaseSpec] | None = None

    def case(self, case_id: str) -> CaseSpec | None:
        """The plan's case of that id (None: not one of its cases)."""
        if self.case_by_id is None:
            self.case_by_id = {c.id: c for c in self.cases}
        return self.case_by_id.get(case_id)

    def narrow(self, cases: list[CaseSpec]) -> None:
        """Run only `cases` (a race's round: its first cases in the race's order)."""
        self.cases, self.case_by_id = cases, None


@dataclass(slots=True)
class Limits:
    in_flight: int
    max_trials: int | None = None
    max_tokens: int | None = None
    max_cost_usd: float | None = None
    # a tuning session's eval_budget_tokens: judge tokens only (the subject's answers are not the evaluation)
    max_judge_tokens: int | None = None
    # the first N finished trials all failed to connect: the target is unreachable (0: never stop)
    unreachable_after: int = 0

    @property
    def budgeted(self) -> bool:
        """A budget counts each trial's start (a trial in flight at a crash counts as spent)."""
        return any(x is not None for x in (self.max_trials, self.max_tokens, self.max_cost_usd))


class Book:
    def __init__(self, plan: Plan, state: RunState, limits: Limits) -> None:
        self.plan, self.state, self.limits = plan, state, limits
        self.outstanding: set[TrialKey] = set()
        self.chained: deque[Slot] = deque()
        # a trial in flight when an earlier process died may have been served: it counts
        self.executed = state.trials_executed() + state.spend.lost_trials
        self.exhausted: str | None = None
        # the resume plan, from the log alone and before anything is scheduled: a cell whose output
        # came before a crash but not its grade is graded first, and (pass_at_k with early exit) earns
        # its next repeat from that grade only, so no repeat of it runs while the old one is graded
        self.regrading: set[tuple[str, str]] = {(v, c) for v, c, _ in state.awaiting_grade}
        self.pending = self._pending()
        self.connect_failures = 0
        self.reached = False  # some trial got past connecting: the target is there
        self._variants = {v.name: v for v in plan.variants}
        self.reservations = Reservations(state, limits.max_tokens, limits.max_cost_usd)
        if self.reservations.active:  # what earlier processes learned of each cell's input
            for (variant, case), cell in list(state.cells.items()):
                if cell.tokens_in and variant in self._variants and (spec := plan.case(case)) is not None:
                    self.reservations.learn(plan.make_job(self._variants[variant], spec, 0))

    def _pending(self) -> Iterator[Slot]:
        plan = self.plan
        first_round = range(1) if plan.early_exit else range(plan.repeats)
        for r in first_round:
            for case in plan.cases:
                for variant in plan.variants:
                    if plan.early_exit and (variant.name, case.id) in self.regrading:
                        continue  # its next repeat, if any, is chained once the regrade is in
                    slot = self.next_repeat(variant, case) if plan.early_exit else (variant, case, r)
                    if slot is not None and not self.is_taken(slot):
                        yield slot

    def next_repeat(self, variant: VariantSpec, case: CaseSpec) -> Slot | None:
        """A cell's first repeat still to run (pass_at_k: none once one passed)."""
        if self.state.has_passed(variant.name, case.id):
            return None
        done = self.state.taken(variant.name, case.id)
        for r in range(self.plan.repeats):
            if not done >> r & 1:
                return (variant, case, r)
        return None

    def is_taken(self, slot: Slot) -> bool:
        return bool(self.state.taken(slot[0].name, slot[1].id) >> slot[2] & 1)

    def next_slot(self) -> Slot | None:
        if self.chained:
            return self.chained.popleft()
        return next(self.pending, None)

    def put_back(self, slot: Slot) -> None:
        """A slot taken but not started (its budget said wait): it is the next one again."""
        self.chained.appendleft(slot)

    def chain_after_failure(self, key: TrialKey) -> None:
        """pass_at_k: a failed repeat earns the cell its next one."""
        case = self.plan.case(key[1])
        slot = None if case is None else self.next_repeat(self._variants[key[0]], case)
        if slot is not None:
            self.chained.append(slot)

    def unreachable(self, message: TrialDone) -> bool:
        """Count connect failures until the first trial that got further; True once they reach the bar."""
        if message.error_class == "connect" and not self.reached:
            self.connect_failures += 1
        elif message.passed is not None or message.error_class:
            self.reached = True
        bar = self.limits.unreachable_after
        return bool(bar) and not self.reached and self.connect_failures >= bar

    def over_budget(self) -> tuple[str, float, float] | None:
        s, lim, reserve = self.state, self.limits, self.reservations
        if lim.max_trials is not None and self.executed >= lim.max_trials:
            return ("max_trials", lim.max_trials, self.executed)
        if lim.max_tokens is not None and reserve.spent_tokens() >= lim.max_tokens:
            return ("max_tokens", lim.max_tokens, reserve.spent_tokens())
        if lim.max_judge_tokens is not None:
            judged = s.judge_tokens_spent()
            if judged >= lim.max_judge_tokens:
                return ("eval_budget_tokens", lim.max_judge_tokens, judged)
        if lim.max_cost_usd is not None and reserve.spent_cost() >= lim.max_cost_usd:
            return ("max_cost_usd", lim.max_cost_usd, reserve.spent_cost())
        return None
