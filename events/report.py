"""The report JSON contract (`engine report --json`), as Structs.

Field order here is the byte order of the JSON, which replay must reproduce
exactly, so fields are only ever appended.
"""

from __future__ import annotations

import msgspec


class Report(msgspec.Struct, kw_only=True):
    """Base for report parts: plain, ordered, JSON-friendly."""


class Latency(Report):
    p50: float | None = None
    p95: float | None = None
    p99: float | None = None
    mean: float | None = None


class Tokens(Report):
    in_: int = msgspec.field(default=0, name="in")
    out: int = 0


class CaseVerdicts(Report):
    """Cases by verdict, their repeats aggregated per scoring.replica_aggregation."""

    passed: int = 0
    failed: int = 0
    flaky: int = 0  # some repeats passed, some failed, short of the aggregation's bar
    errors: int = 0  # every attempt errored (infrastructure, timeout): distinct from failed
    ungraded: int = 0  # outputs exist but no grader could score them (e.g. unparseable judge answers)


class VariantReport(Report):
    name: str
    trials: int
    scored: int
    errors: int
    skipped: int
    passed: int
    mean_score: float | None
    ci95: list[float] | None
    pass_rate: float | None
    # over cases (cluster-robust): where the pass rate of a new run of this kind of suite would land
    pass_rate_ci95: list[float] | None
    pass_at_k: float | None
    pass_hat_k: float | None  # null under pass_at_k with early exit: the attempts it needs are skipped
    strategy_score: float | None
    latency_ms: Latency
    tokens: Tokens
    judge_tokens: int
    cost_usd: float
    params: dict[str, object] = {}
    unscored: int = 0  # graded but without a score (e.g. an unparseable judge answer): excluded, counted
    cases: CaseVerdicts = msgspec.field(default_factory=CaseVerdicts)
    by_tag: dict[str, TagSummary] = {}
    errors_by_class: dict[str, int] = {}  # trial errors and grading errors, by class
    # per trial (Wilson): these very cases rerun, trials independent; narrower than pass_rate_ci95
    pass_rate_trial_ci95: list[float] | None = None
    # agents that report tool_calls (and tool_errors/tool_successes) in their metrics file
    mean_tool_calls: float | None = None
    tool_success_rate: float | None = None


class Comparison(Report):
    candidate: str
    baseline: str
    metric: str
    delta: float | None
    ci95: list[float] | None
    p_value: float | None
    p_value_adjusted: float | None
    test: str
    n_pairs: int
    significant: bool
    pass_rate_delta: float | None = None  # candidate's pass rate minus the baseline's
    relative_improvement: float | None = None  # delta / the baseline's score


class TagSummary(Report):
    """One variant's results on the cases carrying a tag."""

    cases: int
    mean_score: float | None
    pass_rate: float | None


class IdenticalRepeats(Report):
    """Every repeat of a case gave the same output: a sign of caching or temperature 0, so the
    repeats measured nothing about variability."""

    variant: str
    case: str
    repeats: int


class ScenarioVerdict(Report):
    """One (variant, case): its verdict over its repeats (pass, fail, flaky, error, ungraded)."""

    variant: str
    case: str
    verdict: str
    passes: int
    runs: int


class Reproducer(Report):
    """A failing (or errored) trial and the command that reruns it alone (repeat counts from 1)."""

    variant: str
    case: str
    repeat: int
    seed: int
    command: str


class FlakyCase(Report):
    variant: str
    case: str
    passes: int
    runs: int


class ErrorSummary(Report):
    """Errors of one class across the run: how many, where, and one sample message."""

    stage: str  # "trial" (no output) or "grading" (an output no grader could score)
    error_class: str = msgspec.field(name="class")
    count: int
    sample: str
    variants: dict[str, int] = {}


class BudgetStop(Report):
    """A budget that stopped new trials: at its limit, or below it because the next trial's
    worst-case spend (`reserved`, > 0) would not have fit (budgets are hard caps)."""

    budget: str
    limit: float
    used: float
    reserved: float = 0.0
    note: str = ""


class DataError(Report):
    """A stored event the fold could not use (an unreadable or out-of-range record): skipped."""

    seq: int  # its place in the log (0: seen live, before it was stored)
    message: str


class VariationRecord(Report):
    variant: str
    parameter: str
    value: object
    baseline_score: float
    candidate_score: float
    delta: float
    accepted: bool
    p_value: float | None = None
    reason: str = ""
    origin: str = "manual"  # manual or scheduled session
    tokens_used: int = 0
    latency_ms: float = 0.0


class StoppingReport(Report):
    """A sequential run's looks: where it stopped, why, and what that saved against the fixed design."""

    rule: str
    looks_done: int
    max_looks: int
    stopped: str  # efficacy | futility | max | "" (still running)
    level: float  # the significance level of the last look: the report's "significant" uses it
    fixed_design_trials: int
    trials_saved: int


class JudgeAgreement(Report):
    """How far one judge grader can be trusted: its unreadable answers, and with `repeats` > 1 how
    much its scores of one output spread (max - min on the 0-1 scale; 0 = the same every time)."""

    judged: int
    unparseable: int
    unparseable_rate: float
    mean_spread: float | None = None
    max_spread: float | None = None


class PairwiseReport(Report):
    """A pairwise judge's verdicts on one candidate against the baseline, case and repeat paired.

    `p_value`: the exact two-sided sign test of wins against losses (ties set aside). Position:
    how often the judge chose the response shown first (A) among its non-tie answers, the exact
    two-sided test of "no lean" (`position_p_value`), and the candidate's win rate when shown as A
    and as B; the order is drawn per trial, so a lean inflates neither side."""

    grader: str
    variant: str
    baseline: str
    judged: int
    wins: int
    ties: int
    losses: int
    undecided: int  # no usable answer (unparseable, failed call, judge budget)
    win_rate: float | None  # wins / (wins + losses)
    p_value: float | None
    significant: bool
    picked_a: int
    picked_b: int
    position_a_rate: float | None
    position_p_value: float | None
    win_rate_as_a: float | None
    win_rate_as_b: float | None
    judge_tokens: int = 0


class RunReport(Report):
    run_id: str
    experiment: str
    status: str
    is_partial: bool
    trials_total: int
    trials_done: int
    baseline: str | None
    winner: str | None
    winner_significant: bool
    variants: list[VariantReport]
    comparisons: list[Comparison]
    flaky_cases: list[FlakyCase]
    budget_exhausted: list[str]
    strategy: str
    variations: list[VariationRecord] = []
    spec_hash: str = ""  # fingerprint of the experiment spec that produced the report
    errors: list[ErrorSummary] = []  # by stage and class, most frequent first
    # share of finished trials without a usable result (errored, or no grader could score them)
    error_rate: float | None = None
    max_error_rate: float = 0.1
    error_rate_exceeded: bool = False  # `engine run` exits 1
    stop_reason: str = ""  # why a run ended early (unreachable target, budget...), when it did
    grading: int = 0  # the grading round this report shows (0: the run's own; regrades count up)
    grading_name: str = ""
    # integrity: trial results logged twice (the trial ran twice; counted once) and stored events
    # the fold had to skip; `warnings` says each in words
    duplicate_results: int = 0
    data_errors: list[DataError] = []  # the first few
    data_error_count: int = 0
    warnings: list[str] = []
    # "best", not only "beats the baseline": the variants the winner is not separated from (paired
    # test at alpha against each), the winner first; empty when it is separated from every other
    tied_best: list[str] = []
    runner_up_p_value: float | None = None
    # tuning: at most this chance that some accepted change does nothing (decisions x alpha)
    session_error_bound: float | None = None
    stopping: StoppingReport | None = None  # [stopping] rule = "sequential" only
    judge_agreement: dict[str, JudgeAgreement] = {}  # by judge grader
    identical_repeats: list[IdenticalRepeats] = []  # cells whose 2+ repeats all gave one output
    scenarios: list[ScenarioVerdict] = []  # every (variant, case) with its verdict
    reproducers: list[Reproducer] = []  # failing trials (the first 1000), each with its rerun command
    pairwise: list[PairwiseReport] = []  # kind = "pairwise" graders: each candidate against the baseline
    budget_stops: list[BudgetStop] = []  # each budget in budget_exhausted: its figures, and why it stopped
