"""The report JSON contract (`engine report --json`), as Structs.

Field order here is the byte order of the JSON, which replay must reproduce
exactly, so fields are only ever appended.
"""


import msgspec

from engine.events.spec import ExecutionSpec


class Report(msgspec.Struct, kw_only=True, gc=False):
    """Base for report parts: plain, ordered, JSON-friendly. Untracked by the cycle collector (a
    report holds values and lists of parts, never itself: no cycle can form): a part is 16 bytes
    smaller, and the 200,000 parts of a big run's report start no collections while it is built."""


class Latency(Report):
    p50: float | None = None
    p95: float | None = None
    p99: float | None = None
    mean: float | None = None


class Pace(Report):
    """A streamed answer's figure over a variant's trials (time to first token in ms, or tokens per
    second after it): how many trials gave it, their mean with a t-interval, and percentiles."""

    n: int
    mean: float | None = None
    ci95: list[float] | None = None
    p50: float | None = None
    p95: float | None = None


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


class SandboxReport(Report):
    """Where a variant's agent ran: its sandbox policy (engine.events.sandbox), as the spec set it."""

    kind: str
    network: str
    host_ports: list[int] = []
    limits: dict[str, int] = {}
    services: list[str] = []  # the names of the services started in each trial's sandbox


class ReuseReport(Report):
    """A variant's trials taken from earlier runs ([reuse]) rather than sent: how many, from which runs,
    how old their outputs were when this run started, and the subject's tokens and dollars not spent
    again (in the variant's tokens and cost_usd all the same: each reused trial is one sample)."""

    trials: int
    sent: int  # trials this run sent itself
    sources: dict[str, int]  # source run -> trials taken from it
    oldest_age_s: float | None = None
    newest_age_s: float | None = None
    tokens_saved: int = 0
    cost_saved_usd: float = 0.0
    judge_tokens_saved: int = 0  # judge calls reused by their own fingerprint (in judge_tokens all the same)


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
    by_tag: dict[str, "TagSummary"] = {}
    errors_by_class: dict[str, int] = {}  # trial errors and grading errors, by class
    # per trial (Wilson): these very cases rerun, trials independent; narrower than pass_rate_ci95
    pass_rate_trial_ci95: list[float] | None = None
    # agents that report tool_calls (and tool_errors/tool_successes) in their metrics file
    mean_tool_calls: float | None = None
    tool_success_rate: float | None = None
    # cases with no score at all because every finished trial errored or no grader could score it: out
    # of the pass rate and mean score, so a rise here is hidden there
    unscored_cases: int = 0
    # agents that write a transcript (ENGINE_TRANSCRIPT): its tool calls per tool name, over the trials;
    # left out of the JSON without any, so a log written before it existed replays byte for byte
    tool_calls_by_tool: dict[str, int] | msgspec.UnsetType = msgspec.UNSET
    # a command agent in a sandbox: its policy (left out otherwise, so older runs replay byte for byte)
    sandbox: SandboxReport | msgspec.UnsetType = msgspec.UNSET
    # trials reused from earlier runs; left out of the JSON when none were (older logs replay the same)
    reuse: ReuseReport | msgspec.UnsetType = msgspec.UNSET
    # what the target received: the experiment's params with the variant's own (`params`) over them;
    # left out when they are the variant's own (no experiment-wide params), as for a log written before
    sent_params: dict[str, object] | msgspec.UnsetType = msgspec.UNSET
    # a streaming target's (stream = true): absent for a variant with no streamed trial
    ttft_ms: Pace | msgspec.UnsetType = msgspec.UNSET
    tokens_per_s: Pace | msgspec.UnsetType = msgspec.UNSET


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
    # errors per trial, paired by case: the candidate's minus the baseline's, its Holm-adjusted p, and
    # whether it rose past [gate] max_error_rate_increase significantly (then its win is not significant)
    error_rate_delta: float | None = None
    error_rate_p_value: float | None = None
    more_errors: bool = False


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
    dropped_round: int = 0  # a tuning race dropped it after this round: its scores rest on fewer cases
    origin: str = "manual"  # manual or scheduled session
    tokens_used: int = 0
    latency_ms: float = 0.0


class RaceStanding(Report):
    variant: str
    mean: float  # the objective over the round's cases (cost_per_pass: negated, so higher is better)
    lo: float | None = None  # its 95% interval (per-case values; none for cost_per_pass)
    hi: float | None = None
    cases: int = 0


class RaceRound(Report):
    round: int
    cases: int  # cases run so far by every survivor
    leader: str
    survivors: list[str]
    threshold: float  # p below this drops a variant (alpha over rounds and rivals)
    standings: list[RaceStanding] = []


class RaceElimination(Report):
    """A variant dropped from a race: it had fewer cases than the survivors, so its interval is wider."""

    variant: str
    round: int
    lost_to: str
    delta: float
    p_value: float
    threshold: float
    cases: int


class StoppingReport(Report):
    """A sequential run's looks, or a race's rounds: where it stopped, why, and what that saved against
    the fixed design. For a race, looks are its rounds and `stopped` is one_left, equivalent or max."""

    rule: str
    looks_done: int
    max_looks: int
    stopped: str  # efficacy | futility | max | "" (still running); a race: one_left | equivalent | max
    level: float  # the significance level of the last look: the report's "significant" uses it
    fixed_design_trials: int
    trials_saved: int
    objective: str = ""  # a race's objective: score | pass_rate | cost_per_pass
    survivors: list[str] = []
    eliminations: list[RaceElimination] = []
    rounds: list[RaceRound] = []


class JudgeAgreement(Report):
    """How far one judge grader can be trusted: its unreadable answers, and with `repeats` > 1 how
    much its scores of one output spread (max - min on the 0-1 scale; 0 = the same every time)."""

    judged: int
    unparseable: int
    unparseable_rate: float
    mean_spread: float | None = None
    max_spread: float | None = None


class Decidability(Report):
    """The smallest p-values the planned cases and repeats allow, against the level each decision
    needs. Acceptance (winner, tuning, the pass-rate and score gates) is the paired sign-flip test
    over cases: at best 2 / 2^cases. The per-case gate is Fisher's exact test over a case's repeats
    (all pass against all fail), Holm-corrected over `case_gate_tests` = cases x variants.
    `warnings` says, in words, which decision can never be reached and what would reach it."""

    cases: int
    repeats: int
    alpha: float
    accept_level: float | None  # None: acceptance needs no p-value (tuning without require_significance)
    comparisons: int
    min_p_accept: float
    can_accept: bool
    cases_needed: int | None
    min_p_case_gate: float
    case_gate_level: float
    case_gate_tests: int
    can_gate_cases: bool
    repeats_needed: int | None
    warnings: list[str] = []


class LabelDisagreement(Report):
    """One trial where a judge and a person's label differ (repeat counted from 1)."""

    variant: str
    case: str
    repeat: int
    judge: str  # pass | fail
    label: str  # pass | fail
    note: str = ""


class JudgeVsPeople(Report):
    """A judge grader measured against people's labels, the people taken as the truth: a "positive"
    is a pass, so fp counts passes the judge gave that people failed."""

    grader: str
    labelled: int  # labelled trials this judge gave a verdict on
    agreement: float | None
    kappa: float | None  # Cohen's kappa: agreement beyond what the two pass rates give by chance
    kappa_low: float | None  # 95% interval (large-sample standard error; see `method`)
    kappa_high: float | None
    tp: int
    fp: int
    fn: int
    tn: int
    disagreements: list[LabelDisagreement] = []  # the first 200, in variant, case, repeat order
    needs_more: int = 0  # labels still needed for an interval of target_width (0: enough)
    target_width: float = 0.3


class LabelAgreement(Report):
    """People's labels of the run's outputs and every judge measured against them."""

    labels: int  # outputs with a label (the latest label of each output counts)
    stale: int  # labels of an output the trial no longer has
    method: str
    judges: list[JudgeVsPeople] = []


class GroundTruth(Report):
    """A grading round made from labels (`engine regrade RUN --labels`): labelled trials take the
    people's verdict, the rest keep the judges' of the round before."""

    from_labels: int
    from_judges: int


class PairwiseReport(Report):
    """A pairwise judge's verdicts on one candidate against the baseline, case and repeat paired.

    `p_value`: the two-sided paired sign-flip test (`test`) over cases of each case's mean preference
    ((wins - losses) / usable verdicts, a tie counting 0): the case is the unit, as in the other
    comparisons; `cases_preferring` / `cases_against` / `cases_even` count the cases by the sign of
    their mean preference. Position:
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
    test: str = ""  # "sign_flip_mid_p" (older: "sign_flip_exact") | "sign_flip_t" | "none"
    cases: int = 0  # cases with at least one usable verdict
    cases_preferring: int = 0
    cases_against: int = 0
    cases_even: int = 0


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
    max_error_rate: float = ExecutionSpec().max_error_rate  # the spec's default, stated once there
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
    stopping: StoppingReport | None = None  # [stopping] rule = "sequential" or "race" only
    judge_agreement: dict[str, JudgeAgreement] = {}  # by judge grader
    identical_repeats: list[IdenticalRepeats] = []  # cells whose 2+ repeats all gave one output
    scenarios: list[ScenarioVerdict] = []  # every (variant, case) with its verdict
    reproducers: list[Reproducer] = []  # failing trials (the first 1000), each with its rerun command
    pairwise: list[PairwiseReport] = []  # kind = "pairwise" graders: each candidate against the baseline
    decidability: Decidability | None = None  # what the planned cases and repeats can decide at all
    # what each case's score in `mean_score`, `ci95`, `by_tag` and the score comparisons is: the mean
    # of its attempts ("all_attempts"), or, under pass_at_k with early exit, its first scored attempt
    # ("first_attempt"): later attempts run only after a miss, so their mean overstates the score
    mean_score_basis: str = "all_attempts"
    # people's labels against the judges (added when the run has labels; labels never change scores)
    label_agreement: LabelAgreement | None = None
    ground_truth: GroundTruth | None = None  # a grading round made from labels
    budget_stops: list[BudgetStop] = []  # each budget in budget_exhausted: its figures, and why it stopped
    # "failed" when the run ran to its end but every trial errored (events.outcome: the word every
    # surface shows; "completed with errors" is told by `status` and the variants' errors); left out
    # of the JSON otherwise, so a log written before it replays byte for byte
    outcome: str | msgspec.UnsetType = msgspec.UNSET
