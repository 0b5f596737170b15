"""The run fold: everything the report, `engine status` and resume need, in O(variants x cases) memory.

Per-trial facts are kept as bits in per-cell masks (cell = variant x case), so
folding the same event twice changes nothing and memory does not grow with the
number of repeats completed. Scores are summed in fixed point (integers) so the
result does not depend on event order: a resumed run and an uninterrupted run
reach exactly the same state.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from operator import attrgetter, or_

import msgspec
from hdrh.histogram import HdrHistogram

from engine.events import kinds as k
from engine.events.spec import ExperimentSpec, VariantSpec
from engine.store.contract import EventStore
from engine.store.projection import Projection
from engine.store.projections.cell import Cell
from engine.store.projections.cell_table import CellTable
from engine.store.projections.pairwise_verdicts import PairTally, add_verdict
from engine.store.projections.recent_hashes import shared_hash
from engine.store.projections.spend import Spend
from engine.store.projections.stream_pace import PaceTotals

SCALE = 1_000_000_000  # fixed-point unit for scores and dollars
BUDGET_ERRORS = ("judge_budget",)  # unscored by a planned stop, not by a failure: no error
LATENCY_MAX_US = 24 * 3600 * 1_000_000
UNUSABLE_KEPT = 20


# sums of whole scores (k passes of 1.0) as one shared object each, not a new int per cell and state:
# at 5 repeats that was 32 bytes a cell, twice (benchmarks/README.md, "Live memory, round three")
WHOLE_SUMS = tuple(range(0, 65 * SCALE, SCALE))


def fixed_sum(total: int) -> int:
    """`total`, as the shared object when it is a small whole number of SCALE."""
    whole, part = divmod(total, SCALE)
    return WHOLE_SUMS[whole] if not part and 0 <= whole < len(WHOLE_SUMS) else total


def to_fixed(value: float) -> int:
    # a score of 1.0 (every pass of most graders) is the one SCALE object, not a new int per cell:
    # an int saved per cell, twice: its sum and its first score (benchmarks/README.md#in-code-memory)
    return SCALE if value == 1.0 else round(value * SCALE)


@dataclass(slots=True)
class JudgeTally:
    """One judge grader's outputs: how many it judged, could not read, and how far its repeats spread."""

    judged: int = 0
    unparseable: int = 0
    spread_count: int = 0
    spread_sum: float = 0.0
    spread_max: float = 0.0

    def add(self, spread: float | None, unparseable: bool) -> None:
        self.judged += 1
        self.unparseable += unparseable
        if spread is not None:
            self.spread_count += 1
            self.spread_sum += spread
            self.spread_max = max(self.spread_max, spread)


@dataclass(slots=True)
class ErrorTally:
    """Errors of one (stage, class): order-independent, so the sample is the smallest message."""

    count: int = 0
    sample: str = ""
    by_variant: dict[str, int] = field(default_factory=dict)

    def add(self, variant: str, message: str) -> None:
        self.count += 1
        self.by_variant[variant] = self.by_variant.get(variant, 0) + 1
        if not self.sample or message < self.sample:
            self.sample = message


@dataclass(slots=True)
class ReuseTally:
    """One variant's reused trials: how many, from which runs, how old, and what they did not cost again."""

    trials: int = 0
    sources: dict[str, int] = field(default_factory=dict)  # source run -> trials taken from it
    oldest_ts: float = 0.0  # when the oldest reused output was made (0: unknown)
    newest_ts: float = 0.0
    tokens: int = 0  # subject tokens not spent again
    cost: int = 0  # fixed point dollars not spent again

    def add(self, run: str, made_ts: float, tokens: int, cost: int) -> None:
        self.trials += 1
        self.sources[run] = self.sources.get(run, 0) + 1
        if made_ts:
            self.oldest_ts = min(self.oldest_ts or made_ts, made_ts)
            self.newest_ts = max(self.newest_ts, made_ts)
        self.tokens += tokens
        self.cost += cost


@dataclass(slots=True)
class VariantTotals:
    latency_us: HdrHistogram = field(default_factory=lambda: HdrHistogram(1, LATENCY_MAX_US, 3))
    latency_sum_us: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: int = 0  # fixed point dollars
    judge_tokens: int = 0
    judge_tokens_reused: int = 0  # of judge_tokens, those of judge calls reused from earlier runs: not spent
    # from agents' metrics files (fixed point): trials that reported tool_calls, their calls, and the
    # calls whose success is known (tool_errors / tool_successes / tool_success_rate) and succeeded
    tool_trials: int = 0
    tool_calls: int = 0
    tool_known: int = 0
    tool_ok: int = 0
    tools: dict[str, int] = field(default_factory=dict)  # tool calls per tool, from agents' transcripts
    pace: PaceTotals | None = None  # streamed answers' time to first token and tokens per second


def _done_mask(graded: int, failed: int, skipped: int) -> int:
    return graded | failed | skipped


def _failed_mask(completed: int, graded: int, passed: int, unscored: int) -> int:
    """Graded and did not pass (an unscorable output is not a failure: it is ungraded)."""
    return completed & graded & ~passed & ~unscored


@dataclass(slots=True)
class RunState:
    run_id: str
    spec: ExperimentSpec | None = None
    source: str = ""  # the experiment file the run came from
    status: str = "pending"
    trials_total: int = 0
    variants: dict[str, VariantSpec] = field(default_factory=dict)
    proposals: dict[str, k.VariantProposed] = field(default_factory=dict)
    # a CellTable (store.projections.cell_table) when folded here, read and stored as this dict;
    # decoded from a snapshot, the dict itself (a reader's state: no conversion to pay)
    cells: dict[tuple[str, str], Cell] = field(default_factory=CellTable)  # type: ignore[arg-type]
    totals: dict[str, VariantTotals] = field(default_factory=dict)
    awaiting_grade: dict[tuple[str, str, int], k.TrialCompleted] = field(default_factory=dict)
    in_flight: set[tuple[str, str, int]] = field(default_factory=set)
    spend: Spend = field(default_factory=Spend)  # reservations, spend lost in crashes, largest spends
    budget_exhausted: list[str] = field(default_factory=list)
    budget_stops: list[k.BudgetExhausted] = field(default_factory=list)
    cancel_requested: bool = False
    variations: list[k.VariationAccepted | k.VariationRejected] = field(default_factory=list)
    looks: list[k.LookDecided] = field(default_factory=list)  # a sequential run's interim looks
    race_rounds: list[k.RaceRoundDecided] = field(default_factory=list)  # a race's decided rounds
    eliminated: dict[str, k.VariantEliminated] = field(default_factory=dict)  # a race's dropped variants
    judges: dict[str, JudgeTally] = field(default_factory=dict)  # by judge grader name
    pairwise: dict[tuple[str, str], PairTally] = field(default_factory=dict)  # (grader, candidate)
    grading: int = 0
    started_ts: float = 0.0
    finished_ts: float = 0.0
    pid: int = 0
    host: str = ""
    machine: tuple[str, int] = ("", 0)  # (CPU model, cores) it ran on; ("", 0) when not recorded
    origin: str = "manual"
    report_hash: str = ""
    spec_hash: str = ""
    load_warnings: list[str] = field(default_factory=list)  # what loading its file warned of
    tokens_used: int = 0
    cost_used: int = 0
    errors: dict[tuple[str, str], ErrorTally] = field(default_factory=dict)  # (stage, class) -> tally
    grading_name: str = ""
    stop_message: str = ""
    # replay an earlier grading round: later rounds' RegradeStarted and grades are ignored
    target_grading: int | None = None
    duplicates: int = 0  # results for a trial that already had one: it ran twice (never counted twice)
    unusable: list[tuple[int, str]] = field(default_factory=list)  # (seq, why): the first few kept
    unusable_count: int = 0
    # a grading round made from labels: trials that took a person's verdict, and those that kept a judge's
    label_round: bool = False
    from_labels: int = 0
    from_judges: int = 0
    reuse: dict[str, ReuseTally] = field(default_factory=dict)  # by variant: trials reused, not sent

    def reuse_of(self, variant: str) -> ReuseTally:
        found = self.reuse.get(variant)
        if found is None:
            found = self.reuse[variant] = ReuseTally()
        return found

    def skip_unusable(self, seq: int, message: str) -> None:
        self.unusable_count += 1
        if len(self.unusable) < UNUSABLE_KEPT:
            self.unusable.append((seq, message[:300]))

    def tally(self, stage: str, error_class: str, variant: str, message: str) -> None:
        key = (stage, error_class)
        found = self.errors.get(key)
        if found is None:
            found = self.errors[key] = ErrorTally()
        found.add(variant, message)

    def judge_tally(self, name: str) -> JudgeTally:
        found = self.judges.get(name)
        if found is None:
            found = self.judges[name] = JudgeTally()
        return found

    def cell(self, variant: str, case: str) -> Cell:
        return self.cell_of((variant, case))

    def cell_of(self, key: tuple[str, str]) -> Cell:
        """The cell of (variant, case); a new cell keeps `key` (the caller may key other per-cell
        records with the same tuple: one tuple per cell, not one per record)."""
        found = self.cells.get(key)
        if found is None:  # a table copies the new cell in: the cell to write to is the one it holds
            self.cells[key] = Cell()
            found = self.cells[key]
        return found

    def tokens_in_of(self, key: tuple[str, str]) -> int:
        """The largest input tokens of one of the cell's trials so far (0: none known)."""
        found = self.cells.get(key)
        return 0 if found is None else found.tokens_in

    def totals_for(self, variant: str) -> VariantTotals:
        found = self.totals.get(variant)
        if found is None:
            found = self.totals[variant] = VariantTotals()
        return found

    def trials_done(self) -> int:
        return self.bit_total(_done_mask, "graded", "failed", "skipped")

    def bit_total(self, combine: Callable[..., int] | None, *names: str) -> int:
        """Over all cells, the bits set in `combine` of the named masks (the one mask when None; it
        must give 0 for masks that are all 0): a table's columns read without a view per cell, a
        decoded state's cells one by one (tests/test_cell_table.py holds the two equal)."""
        cells = self.cells
        if isinstance(cells, CellTable):
            return cells.bit_total(combine, names)
        pick = attrgetter(*names)
        if combine is None:
            return sum(pick(c).bit_count() for c in cells.values())
        return sum(combine(*pick(c)).bit_count() for c in cells.values())

    # --- views for the scheduler, status and compare (they do not read the masks themselves) ---
    def taken(self, variant: str, case: str) -> int:
        """Repeats (bits) that need no call: finished, or completed and waiting for their grade."""
        cell = self.cells.get((variant, case))
        return 0 if cell is None else cell.done() | cell.completed

    def has_passed(self, variant: str, case: str) -> bool:
        cell = self.cells.get((variant, case))
        return cell is not None and bool(cell.passed)

    def passed_cells(self) -> Iterator[tuple[str, str, int]]:
        """(variant, case, repeats up to and including the last pass) of every cell with a pass."""
        for (variant, case), cell in self.cells.items():
            if cell.passed:
                yield variant, case, cell.passed.bit_length()

    def trials_executed(self) -> int:
        """Trials the subject was called for and that ended (an output or an error)."""
        return self.bit_total(or_, "completed", "failed")

    def trials_errored(self) -> int:
        return self.bit_total(None, "failed")

    def trials_passed(self) -> int:
        return self.bit_total(None, "passed")

    def trials_failed(self) -> int:
        """Graded trials that did not pass (an unscorable output is not a failure: it is ungraded)."""
        return self.bit_total(_failed_mask, "completed", "graded", "passed", "unscored")

    def judge_tokens_spent(self) -> int:
        """Judge tokens this run spent itself (reused judge calls cost it nothing): what budgets count."""
        return sum(t.judge_tokens - t.judge_tokens_reused for t in self.totals.values())


def load_run_state(log: EventStore, run_id: str, grading: int | None = None) -> RunState:
    """The run folded from its log; `grading` replays an earlier grading round (default: the latest)."""
    return RUN_STATE.load(log, run_id, RunState(run_id, target_grading=grading))


def _defined(s: RunState, e: k.ExperimentDefined) -> None:
    s.spec, s.spec_hash, s.source = e.spec, e.spec_hash, e.source
    s.load_warnings = list(e.warnings)
    if isinstance(s.cells, CellTable):  # a cell per variant and case to come: columns of that size
        s.cells.expect(len(e.spec.cases))


def _machine(known: tuple[str, int], e: k.RunStarted) -> tuple[str, int]:
    """The machine the run's trials ran on; a run resumed on another one ran on SEVERAL (its latency
    is then never compared with another machine's)."""
    here = (e.cpu_model, e.cpu_cores)
    if not e.cpu_model or known in (("", 0), here):
        return here if e.cpu_model else known
    return (SEVERAL_MACHINES, 0)


SEVERAL_MACHINES = "several machines"


def _started(s: RunState, e: k.RunStarted) -> None:
    s.status = "running"
    s.trials_total = max(s.trials_total, e.trials_total)
    s.started_ts = s.started_ts or e.ts
    s.pid, s.host, s.origin = e.pid, e.host, e.origin
    s.machine = _machine(s.machine, e)
    s.spend.lose_in_flight(s.in_flight)  # maybe served before the process died: spent
    s.in_flight.clear()  # a restarted run re-runs whatever was in flight


def _proposed(s: RunState, e: k.VariantProposed) -> None:
    s.variants[e.variant.name] = e.variant
    s.proposals[e.variant.name] = e


def _trial_started(s: RunState, e: k.TrialStarted) -> None:
    s.in_flight.add((e.variant, e.case, e.repeat))
    s.spend.started((e.variant, e.case, e.repeat), e.reserved_tokens, to_fixed(e.reserved_cost))


def _completed(s: RunState, e: k.TrialCompleted) -> None:
    _output(s, e, new_spend=True)


def _reused(s: RunState, e: k.TrialReused) -> None:
    """An earlier run's output taken as this run's sample: in every figure of the report like a new one,
    but no new spend (budgets count what this run paid for), and tallied as reused."""
    if _output(s, e, new_spend=False):
        s.reuse_of(e.variant).add(e.source_run, e.source_ts, e.tokens_in + e.tokens_out, to_fixed(e.cost_usd))


def _output(s: RunState, e: k.TrialCompleted, new_spend: bool) -> bool:
    """Fold a trial's output; False when the trial already had a result (it is not counted twice)."""
    pair = (e.variant, e.case)
    cell, bit = s.cell_of(pair), 1 << e.repeat
    s.in_flight.discard((e.variant, e.case, e.repeat))
    if cell.completed & bit or cell.failed & bit:
        s.duplicates += 1
        return False
    # figures first: a poison one (NaN, inf) raises before the state changes, and the event is skipped
    cost, latency_us = to_fixed(e.cost_usd), min(max(1, round(e.latency_ms * 1000)), LATENCY_MAX_US)
    lowest = not cell.completed or bit < (cell.completed & -cell.completed)
    cell.completed |= bit
    if cell.first_output and e.output_hash != cell.first_output:
        cell.outputs_vary = True
    if lowest:  # the lowest repeat's output, in whatever order the repeats finished: as a replay says
        cell.first_output = shared_hash(e.output_hash)
    if not cell.graded & bit:
        s.awaiting_grade[(e.variant, e.case, e.repeat)] = e
    t = s.totals_for(e.variant)
    t.latency_us.record_value(latency_us)
    t.latency_sum_us += latency_us
    cell.cost += cost
    if new_spend:
        _spend(s, t, e.tokens_in, e.tokens_out, cost)
    else:  # the report's figures, not the run's spend
        t.tokens_in, t.tokens_out, t.cost = (
            t.tokens_in + e.tokens_in,
            t.tokens_out + e.tokens_out,
            t.cost + cost,
        )
    s.spend.ended((e.variant, e.case, e.repeat), e.tokens_in, e.tokens_out, cost)
    cell.tokens_in = max(cell.tokens_in, e.tokens_in)
    if e.agent is not None and "tool_calls" in e.agent.metrics:
        _tools(t, e.agent.metrics)
    if e.agent is not None:
        for tool, calls in e.agent.tools.items():
            t.tools[tool] = t.tools.get(tool, 0) + calls
        if e.agent.ttft_ms is not None:
            t.pace = t.pace or PaceTotals()
            t.pace.add(e.agent.ttft_ms, e.agent.tokens_per_s)
    return True


def _tools(t: VariantTotals, metrics: dict[str, float]) -> None:
    """An agent's tool figures: the calls, and how many of them succeeded when it says so."""
    calls = max(0.0, metrics["tool_calls"])
    t.tool_trials += 1
    t.tool_calls += to_fixed(calls)
    if "tool_errors" in metrics:
        ok = calls - metrics["tool_errors"]
    elif "tool_successes" in metrics:
        ok = metrics["tool_successes"]
    elif "tool_success_rate" in metrics:
        ok = metrics["tool_success_rate"] * calls
    else:
        return
    t.tool_known += to_fixed(calls)
    t.tool_ok += to_fixed(min(max(ok, 0.0), calls))


def _spend(s: RunState, t: VariantTotals, tokens_in: int, tokens_out: int, cost: int) -> None:
    t.tokens_in += tokens_in
    t.tokens_out += tokens_out
    t.cost += cost
    s.tokens_used += tokens_in + tokens_out
    s.cost_used += cost


def _failed(s: RunState, e: k.TrialFailed) -> None:
    pair = (e.variant, e.case)
    cell, bit = s.cell_of(pair), 1 << e.repeat
    s.in_flight.discard((e.variant, e.case, e.repeat))
    if cell.failed & bit or cell.completed & bit:
        s.duplicates += 1
        return
    cost = to_fixed(e.cost_usd)
    cell.failed |= bit
    cell.cost += cost
    _spend(s, s.totals_for(e.variant), e.tokens_in, e.tokens_out, cost)
    s.spend.ended((e.variant, e.case, e.repeat), e.tokens_in, e.tokens_out, cost)
    cell.tokens_in = max(cell.tokens_in, e.tokens_in)
    s.tally("trial", e.error_class or e.error_kind, e.variant, e.message[:300])


def _graded(s: RunState, e: k.TrialGraded) -> None:
    if e.grading != s.grading:
        return
    cell, bit = s.cell(e.variant, e.case), 1 << e.repeat
    if cell.graded & bit:
        s.duplicates += 1
        return
    score = None if e.score is None else to_fixed(e.score)  # a poison score is refused before any change
    s.awaiting_grade.pop((e.variant, e.case, e.repeat), None)
    cell.graded |= bit
    if e.passed:
        cell.passed |= bit
    if score is None:
        cell.unscored |= bit
        if any(g.error and g.error not in BUDGET_ERRORS for g in e.grades):
            cell.ungradable |= bit
    else:
        # the first score is the sum's object too (not a second int of the same value per cell)
        cell.score_sum = fixed_sum(cell.score_sum + score) if cell.score_sum else score
        if cell.first_repeat < 0 or e.repeat < cell.first_repeat:
            cell.first_repeat, cell.first_score = e.repeat, score
    if s.label_round:
        if any(g.name == k.LABEL_GRADER for g in e.grades):
            s.from_labels += 1
        else:
            s.from_judges += 1
    reused = sum(g.tokens for g in e.grades if g.reused_from)  # [reuse]: in the report, not new spend
    totals = s.totals_for(e.variant)
    totals.judge_tokens += e.judge_tokens
    totals.judge_tokens_reused += reused
    s.tokens_used += e.judge_tokens - reused
    s.spend.judged(e.judge_tokens)
    for grade in e.grades:
        if grade.error:
            s.tally("grading", grade.error, e.variant, f"{grade.name}: {grade.reason}"[:300])
        if grade.judge_model:
            s.judge_tally(grade.name).add(grade.spread, grade.error == "judge_unparseable")


def _skipped(s: RunState, e: k.TrialSkipped) -> None:
    cell = s.cell(e.variant, e.case)
    cell.skipped |= 1 << e.repeat


def _regrade(s: RunState, e: k.RegradeStarted) -> None:
    # a new grading round: scores start again; outputs and spend are untouched
    if s.target_grading is not None and e.grading > s.target_grading:
        return
    s.grading, s.grading_name = e.grading, e.name or f"grading {e.grading}"
    s.label_round, s.from_labels, s.from_judges = e.labels, 0, 0
    s.errors = {key: tally for key, tally in s.errors.items() if key[0] != "grading"}
    if s.spec is not None:
        scoring = msgspec.structs.replace(s.spec.scoring, pass_threshold=e.pass_threshold)
        s.spec = msgspec.structs.replace(s.spec, graders=list(e.graders), scoring=scoring)
    for cell in s.cells.values():
        cell.graded = cell.passed = cell.unscored = cell.ungradable = cell.score_sum = cell.first_score = 0
        cell.first_repeat = -1
    for totals in s.totals.values():
        totals.judge_tokens = totals.judge_tokens_reused = 0


def _budget(s: RunState, e: k.BudgetExhausted) -> None:
    if e.budget not in s.budget_exhausted:
        s.budget_exhausted.append(e.budget)
        s.budget_stops.append(e)


def _cancel(s: RunState, e: k.CancelRequested) -> None:
    s.cancel_requested = True


def _variation(s: RunState, e: k.VariationAccepted | k.VariationRejected) -> None:
    s.variations.append(e)


def _look(s: RunState, e: k.LookDecided) -> None:
    if not s.looks or e.look > s.looks[-1].look:  # a look decided again after a resume: the first counts
        s.looks.append(e)


def _race_round(s: RunState, e: k.RaceRoundDecided) -> None:
    # a round decided again after a resume: the first decision counts
    if not s.race_rounds or e.round > s.race_rounds[-1].round:
        s.race_rounds.append(e)


def _eliminated(s: RunState, e: k.VariantEliminated) -> None:
    s.eliminated.setdefault(e.variant, e)


def _run_completed(s: RunState, e: k.RunCompleted) -> None:
    s.status = e.status
    s.finished_ts = e.ts
    s.stop_message = e.message
    s.spend.lose_in_flight(s.in_flight)  # stopped mid-call (a forced stop): maybe served
    s.in_flight.clear()


def _run_cancelled(s: RunState, e: k.RunCancelled) -> None:
    s.status = "cancelled"


def _report(s: RunState, e: k.ReportWritten) -> None:
    s.report_hash = e.report_hash


RUN_STATE = Projection[RunState](
    {
        k.ExperimentDefined: _defined,
        k.RunStarted: _started,
        k.VariantProposed: _proposed,
        k.TrialStarted: _trial_started,
        k.TrialCompleted: _completed,
        k.TrialReused: _reused,
        k.TrialFailed: _failed,
        k.TrialGraded: _graded,
        k.TrialSkipped: _skipped,
        k.RegradeStarted: _regrade,
        k.BudgetExhausted: _budget,
        k.CancelRequested: _cancel,
        k.VariationAccepted: _variation,
        k.VariationRejected: _variation,
        k.LookDecided: _look,
        k.RaceRoundDecided: _race_round,
        k.VariantEliminated: _eliminated,
        k.PairwiseJudged: lambda s, e: add_verdict(s.pairwise, e),
        k.RunCompleted: _run_completed,
        k.RunCancelled: _run_cancelled,
        k.ReportWritten: _report,
    },
    on_unusable=RunState.skip_unusable,
)
# the fold the aggregator applies live and replay applies to the stored log
evolve = RUN_STATE.evolve
