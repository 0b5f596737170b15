"""Every state change of engine, as a past-tense event.

Rules that keep old logs readable: tags are stable dotted names, changes are additive (new
optional fields with defaults), and a breaking change raises the class's VERSION and adds, on the
class, an upcaster from the version before (UPCASTERS[old] lifts a raw stored dict one version).
"""


from collections.abc import Callable
from typing import Any, ClassVar, Literal

import msgspec

from engine.events import upcasts
from engine.events.spec import ExperimentSpec, GraderSpec, VariantSpec

Upcaster = Callable[[dict[str, Any]], dict[str, Any]]

ErrorKind = Literal["infra", "model", "timeout", "budget", "cancelled", "config"]
# Error classes name what went wrong more precisely than the kind, for reports ("connect: 40 trials").
# Trial stage: connect, network, http_429, http_5xx, http_4xx, timeout, malformed_response, agent_exit,
# agent_start (the agent did not start: exit 126/127, under any grader),
# subject_error, bad_metrics, bad_transcript, sandbox (a sandbox or its services could not start:
# "sandbox boot failed", kind infra), worker_lost (a Ray worker died beyond its retries),
# worker_error (a Ray task raised on its worker), config.
# Grading stage: judge_unparseable, judge_failed, judge_budget.


class Event(msgspec.Struct, tag_field="type", kw_only=True, frozen=True, omit_defaults=True, gc=False):
    run_id: str
    ts: float = 0.0
    # the version it was stored at; the codec writes VERSION (a stored event without `v` is v1)
    v: int = 1

    VERSION: ClassVar[int] = 1
    UPCASTERS: ClassVar[dict[int, Upcaster]] = {}


class ExperimentDefined(Event, tag="experiment.defined"):
    spec: ExperimentSpec
    spec_hash: str
    source: str = ""
    # what loading the file warned of (a missing prompt override the source prompt stands in for):
    # kept so the report says it too, not only the terminal that ran it
    warnings: list[str] = []

    VERSION: ClassVar[int] = 2
    UPCASTERS: ClassVar[dict[int, Upcaster]] = {1: upcasts.tagged_specs}


class RunStarted(Event, tag="run.started"):
    experiment: str
    trials_total: int
    origin: Literal["manual", "scheduled"] = "manual"
    pid: int = 0
    host: str = ""
    resumed: bool = False
    # the machine it ran on: latency is compared across runs of one machine only (a slower CI runner
    # is not a regression); "" / 0 for runs logged before these were recorded
    cpu_model: str = ""
    cpu_cores: int = 0
    # the command-line narrowing it ran under ("--case", "--variant"): such a rerun is never green by
    # itself, and history leaves it out unless asked for every run
    narrowed_by: list[str] = []


class VariantProposed(Event, tag="variant.proposed"):
    variant: VariantSpec
    index: int
    parent: str | None = None
    parameter: str | None = None
    value: Any = None


class TrialStarted(Event, tag="trial.started"):
    variant: str
    case: str
    repeat: int
    attempt: int = 1
    # the worst-case spend the budgets hold for this trial until it ends; a trial still in flight
    # when its process died counts as having spent it
    reserved_tokens: int = 0
    reserved_cost: float = 0.0


class AgentReport(msgspec.Struct, kw_only=True, frozen=True, omit_defaults=True, gc=False):
    """What the subject left beyond its output: an agent's (command target) stderr and the figures it
    reported, a streamed answer's pace."""

    stderr_hash: str = ""  # blob of the agent's stderr, when it wrote any
    metrics: dict[str, float] = {}  # from ENGINE_METRICS_FILE (tool_calls...)
    transcript_hash: str = ""  # blob of the conversation it wrote to ENGINE_TRANSCRIPT (JSONL messages)
    tools: dict[str, int] = {}  # that transcript's tool calls per tool name
    services: dict[str, str] = {}  # blobs of the output of the services its sandbox started, by name
    # a streamed answer's pace (an HTTP target with stream = true): request sent to first content
    # token, and output tokens per second after it (None: fewer than two tokens). Here, not on the
    # trial event itself, whose wire map is full (see TrialCompleted.agent)
    ttft_ms: float | None = None
    tokens_per_s: float | None = None


class TrialCompleted(Event, tag="trial.completed"):
    variant: str
    case: str
    repeat: int
    output_hash: str
    latency_ms: float
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    exit_code: int | None = None
    attempts: int = 1
    # one optional field for an agent's report, not several (the fingerprint below made the map 16
    # keys: a map16 header; events stored with the 15-key fixmap header decode the same)
    agent: AgentReport | None = None
    # the request's fingerprint (actors.targets.fingerprint; docs/reuse.md): a later run with the same
    # one may reuse this output instead of sending the request again ("": logged before fingerprints)
    fingerprint: str = ""


class TrialReused(TrialCompleted, tag="trial.reused", kw_only=True):
    """A trial not sent: an earlier trial with the same request fingerprint (and repeat index) gave its
    output, which this run takes as its own sample. It names the run and trial it came from
    (`source_run` logged it, as a trial.completed or a trial.reused of its own) and when that output
    was made (`source_ts`: the first run's, through any chain of reuses). Its figures (tokens,
    cost, latency) are the source's: the report shows them, budgets do not count them."""

    source_run: str
    source_variant: str
    source_case: str
    source_ts: float = 0.0


class TrialFailed(Event, tag="trial.failed"):
    variant: str
    case: str
    repeat: int
    error_kind: ErrorKind
    message: str
    latency_ms: float = 0.0
    attempts: int = 1
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    error_class: str = ""  # what went wrong, more precisely than error_kind (see the list above)
    exit_code: int | None = None  # an agent that exited non-zero (error_class agent_exit)


class GraderResult(msgspec.Struct, kw_only=True, frozen=True, omit_defaults=True):
    name: str
    score: float | None
    passed: bool
    weight: float = 1.0
    gate: bool = False
    reason: str = ""
    tokens: int = 0
    error: str = ""  # a grading error class (judge_unparseable...): the grader could not judge
    veto: bool = False  # a failed veto (a forbidden rule) sinks the trial's score to 0
    # a judge's: its model, a fingerprint of the prompt it was given, its raw answer (the first
    # repeat's, cut short), and with judge repeats the spread (max - min) of the repeats' scores
    judge_model: str = ""
    prompt_hash: str = ""
    raw: str = ""
    spread: float | None = None
    # a judge's call, fingerprinted (its target, params, rendered prompt with the output, repeats): a
    # later run with [reuse] takes this grade for the same call; `reused_from` names the run it came from
    fingerprint: str = ""
    reused_from: str = ""


class TrialGraded(Event, tag="trial.graded"):
    variant: str
    case: str
    repeat: int
    score: float | None
    passed: bool
    grades: list[GraderResult] = []
    grading: int = 0
    judge_tokens: int = 0


class TrialSkipped(Event, tag="trial.skipped"):
    variant: str
    case: str
    repeat: int
    reason: str


class VariationDecided(Event):
    """What both tuning decisions record (not an event of its own: accepted or rejected are)."""

    variant: str
    parameter: str
    value: Any
    baseline: str
    baseline_score: float
    candidate_score: float
    delta: float
    p_value: float | None = None
    origin: Literal["manual", "scheduled"] = "manual"
    # the candidate's cost of evaluation: subject + judge tokens, mean trial latency
    tokens_used: int = 0
    latency_ms: float = 0.0


class VariationAccepted(VariationDecided, tag="variation.accepted"):
    pass


class VariationRejected(VariationDecided, tag="variation.rejected"):
    reason: str = ""
    # a tuning race dropped the candidate after this round (0: it was decided on every case); its
    # scores are over the cases it ran
    dropped_round: int = 0


class LookDecided(Event, tag="look.decided"):
    """A sequential run's interim look ([stopping] rule "sequential"): after `repeats` repeats, the
    comparisons were judged at `level`; `stop` says why the run ends here ("" when it goes on)."""

    look: int
    looks: int
    repeats: int
    level: float
    stop: Literal["", "efficacy", "futility", "max"] = ""


class RaceStanding(msgspec.Struct, frozen=True, omit_defaults=True, gc=False):
    """One variant's objective over the cases a race round had run: per-case mean, 95% interval."""

    variant: str
    mean: float
    lo: float | None = None
    hi: float | None = None
    cases: int = 0


class VariantEliminated(Event, tag="variant.eliminated"):
    """A raced variant dropped after a round ([stopping] rule "race"): paired over the round's cases it
    was significantly worse than `lost_to` (p below the round's threshold); it gets no more trials."""

    variant: str
    round: int
    lost_to: str
    delta: float  # lost_to's objective minus this variant's (the loser's deficit, on the objective)
    p_value: float
    threshold: float
    cases: int  # the paired cases the decision rests on


class RaceRoundDecided(Event, tag="race.round_decided"):
    """A race round's decision: who is still in, the standings it saw, and why the race ends here
    ("" when it goes on; one_left, equivalent or max)."""

    round: int
    rounds: int
    cases: int  # cases run so far (every surviving variant ran the same ones)
    threshold: float
    leader: str
    survivors: list[str]
    standings: list[RaceStanding] = []
    stop: Literal["", "one_left", "equivalent", "max"] = ""


class PairwiseJudged(Event, tag="pairwise.judged"):
    """A pairwise judge's verdict on a candidate's and the baseline's outputs of one case and repeat.
    The candidate was shown as `candidate_position` ("A" or "B", drawn from the trial's seed), so
    the judge's lean to a position can be measured and averages out. `winner` is from the
    candidate's side: "candidate", "baseline", "tie", or "" when the judge gave no usable answer
    (`error` says why)."""

    grader: str
    variant: str
    baseline: str
    case: str
    repeat: int
    candidate_position: Literal["A", "B"]
    winner: Literal["candidate", "baseline", "tie", ""]
    reason: str = ""
    judge_model: str = ""
    prompt_hash: str = ""
    raw: str = ""
    tokens: int = 0
    error: str = ""
    # the judge call's fingerprint (judge target, grader, the prompt with both outputs in their order):
    # a later run with [reuse] takes this verdict for the same call; `reused_from` names the run asked
    fingerprint: str = ""
    reused_from: str = ""


class RunMarked(Event, tag="run.marked"):
    """`engine mark RUN green|red`: a person's word on a run, above the automatic green rule."""

    mark: Literal["green", "red"]
    by: str = ""


class LabelRecorded(Event, tag="label.recorded"):
    """A person's verdict on one trial's stored output (`engine label`, an import, the web view).
    It names the output by its hash, so it holds across grading rounds; the latest label of an output
    wins. `repeat` counts from 0 like every trial event (people see it from 1)."""

    variant: str
    case: str
    repeat: int
    output_hash: str
    verdict: Literal["pass", "fail"]
    score: float | None = None
    note: str = ""
    by: str = ""


# the grade a trial takes from its label in a grading round made from labels (`engine regrade --labels`)
LABEL_GRADER = "people"


class ConfigApplied(Event, tag="config.applied"):
    """auto_apply wrote the session's accepted values to a config file."""

    path: str
    values: dict[str, Any]


class BudgetExhausted(Event, tag="budget.exhausted"):
    budget: str
    limit: float
    used: float
    # > 0: the run stopped below the limit because the next trial's worst case (this) did not fit
    reserved: float = 0.0


class CancelRequested(Event, tag="cancel.requested"):
    reason: str = ""
    by: str = ""


class RunCancelled(Event, tag="run.cancelled"):
    reason: str = ""


class RunCompleted(Event, tag="run.completed"):
    status: Literal["completed", "partial", "cancelled", "failed"]
    message: str = ""


class ReportWritten(Event, tag="report.written"):
    """The rendered report JSON was stored as a blob; replay must reproduce it byte for byte."""

    report_hash: str
    grading: int = 0


class RegradeStarted(Event, tag="regrade.started"):
    """A new grading round over the stored outputs; the subject is not called again."""

    grading: int
    graders: list[GraderSpec] = []
    pass_threshold: float = 0.5
    name: str = ""  # what the user called this grading round (default: the graders file's name)
    labels: bool = False  # `engine regrade --labels`: labelled trials take the people's verdict

    VERSION: ClassVar[int] = 2
    UPCASTERS: ClassVar[dict[int, Upcaster]] = {1: upcasts.tagged_graders}


AnyEvent = (
    ExperimentDefined
    | RunStarted
    | VariantProposed
    | TrialStarted
    | TrialCompleted
    | TrialReused
    | TrialFailed
    | TrialGraded
    | TrialSkipped
    | VariationAccepted
    | VariationRejected
    | LookDecided
    | VariantEliminated
    | RaceRoundDecided
    | PairwiseJudged
    | RunMarked
    | LabelRecorded
    | ConfigApplied
    | BudgetExhausted
    | CancelRequested
    | RunCancelled
    | RunCompleted
    | ReportWritten
    | RegradeStarted
)

# the events that give a trial its output: sent (trial.completed) or reused from an earlier run
OUTPUT_TAGS = frozenset({"trial.completed", "trial.reused"})

EVENT_TYPES: tuple[type[Event], ...] = AnyEvent.__args__  # type: ignore[attr-defined]


def tag_of(event_type: type[Event]) -> str:
    return str(event_type.__struct_config__.tag)


TAG_BY_TYPE: dict[type, str] = {t: tag_of(t) for t in EVENT_TYPES}
