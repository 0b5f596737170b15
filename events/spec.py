"""The experiment file, as typed Structs: the user-facing contract.

Unknown fields are rejected so a typo in an experiment file is an error, not a silently ignored
setting; ranges are in the types (see spec_base), so nothing out of range reaches the log.
Targets and graders are tagged unions, one Struct per kind (see targets and graders).
"""


from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from engine.events.graders import (  # noqa: F401 - re-exported: the spec's vocabulary in one place
    GRADER_KINDS,
    CommandGraderSpec,
    ContainsGraderSpec,
    ExactGraderSpec,
    GraderSpec,
    JudgeGraderSpec,
    RubricCriterion,
)
from engine.events.kind_convert import grader_spec, override_target  # noqa: F401
from engine.events.spec_base import (  # noqa: F401
    BIG,
    Count,
    EnvRef,
    Finite,
    Fraction,
    Name,
    NonNegative,
    Positive,
    PositiveInt,
    Price,
    Seconds,
    Seed,
    Spec,
)
from engine.events.targets import (  # noqa: F401
    TARGET_KINDS,
    CommandTargetSpec,
    HttpTarget,
    LocalTargetSpec,
    OpenAITargetSpec,
    PythonTargetSpec,
    TargetSpec,
)

RepeatStrategy = Literal["mean", "pass_at_k", "confidence_interval"]
TuneStrategy = Literal["grid", "random", "neighborhood", "optuna"]
MAX_REPEATS = 10_000


class SamplingParams(msgspec.Struct, kw_only=True):
    """The generation parameters engine knows, with their types and ranges. `params` tables are
    checked against it; other names pass through untouched (a server may know them)."""

    temperature: Annotated[float, Meta(ge=0, le=2)] | None = None
    top_p: Annotated[float, Meta(ge=0, le=1)] | None = None
    top_k: Annotated[int, Meta(ge=0, le=2**31)] | None = None
    min_p: Annotated[float, Meta(ge=0, le=1)] | None = None
    max_tokens: Annotated[int, Meta(ge=1, le=2**31)] | None = None
    frequency_penalty: Annotated[float, Meta(ge=-2, le=2)] | None = None
    presence_penalty: Annotated[float, Meta(ge=-2, le=2)] | None = None
    seed: Annotated[int, Meta(ge=0, le=2**63 - 1)] | None = None
    stop: str | list[str] | None = None


class VariantSpec(Spec):
    name: Name
    description: str | None = None
    owner: str | None = None
    model: str | None = None
    system: str | None = None
    # "{prompt}" is replaced by the case prompt; lets a variant rephrase every case
    prompt_template: str | None = None
    overrides_tag: str = "latest"
    params: dict[str, Any] = {}
    flags: dict[str, Any] = {}
    # any TargetSpec field, overriding the experiment's default target
    target: dict[str, Any] = {}
    setup: list[str] = []


class CaseSpec(Spec):
    id: Name
    prompt: str
    expected: Any = None
    context: str | None = None
    reference: str | None = None
    tags: list[str] = []
    criteria: dict[str, Any] = {}
    metadata: dict[str, Any] = {}


class SuiteSpec(Spec):
    path: Name
    select: list[str] = []
    tags: list[str] = []


class RepeatSpec(Spec):
    count: Annotated[int, Meta(ge=1, le=MAX_REPEATS)] = 1
    strategy: RepeatStrategy = "mean"
    early_exit: bool = True
    cost_limit_usd: Positive | None = None


class BudgetSpec(Spec):
    max_trials: PositiveInt | None = None
    max_wall_time_s: Positive | None = None
    max_tokens: PositiveInt | None = None
    max_cost_usd: Positive | None = None
    judge_max_tokens: PositiveInt | None = None
    # refused before launch (exit 2) when the plan is larger: no run cut short to a partial result
    max_trials_per_run: PositiveInt | None = None
    max_variants: PositiveInt | None = None


class RaySpec(Spec):
    """Where a `backend = "ray"` run sends its trials. No address: a local Ray instance is started."""

    # "auto" (the cluster this machine belongs to), "host:6379" (a head's GCS) or "ray://host:10001"
    address: str | None = None
    num_cpus: Annotated[float, Meta(gt=0, le=BIG)] = 1  # CPUs each trial's task reserves on a worker
    resources: dict[str, Annotated[float, Meta(ge=0)]] = {}  # custom resources each task reserves
    runtime_env: dict[str, Any] = {}  # Ray's runtime_env for the workers (pip, env_vars, working_dir)
    # a task whose worker process died is retried this often (one completion is logged either way)
    max_retries: Annotated[int, Meta(ge=0, le=100)] = 3


class ExecutionSpec(Spec):
    # where trials run: executor workers in this process, or Ray tasks on a cluster
    backend: Literal["local", "ray"] = "local"
    ray: RaySpec = RaySpec()
    concurrency: Annotated[int, Meta(ge=1, le=4096)] = 16  # executor workers
    judge_concurrency: Annotated[int, Meta(ge=1, le=1024)] = 3  # grading workers
    trial_timeout_s: Seconds | None = None
    # above this share of trials without a usable result (errored, or ungradable) the run exits 1
    max_error_rate: Fraction = 0.1
    # when the first N finished trials all failed to connect, the target is unreachable: stop (0: never)
    unreachable_after: Annotated[int, Meta(ge=0, le=1_000_000)] = 5


class ReplicaAggregation(Spec):
    """How a case's repeats make one verdict: all must pass, any may, or a share of them."""

    strategy: Literal["all", "any", "percentage"] = "all"
    min_pass_rate: Annotated[float, Meta(gt=0, le=1, description="a share of the repeats, above 0")] = 1.0


class ScoringSpec(Spec):
    pass_threshold: Annotated[float, Meta(ge=0, le=1, description="scores run from 0 to 1")] = 0.5
    replica_aggregation: ReplicaAggregation = ReplicaAggregation()


class GateSpec(Spec):
    """Regression thresholds for `engine compare --gate`."""

    alpha: Annotated[float, Meta(gt=0, lt=1)] = 0.05
    max_pass_rate_drop: Fraction = 0.02
    max_mean_score_drop: Fraction = 0.02
    # errors per trial (paired by case): a rise past this, significant after Holm, regresses
    max_error_rate_increase: Fraction = 0.02
    max_p95_latency_increase: NonNegative = 0.20
    max_cost_increase: NonNegative = 0.20
    # streamed answers (stream = true on both runs' targets): p95 time to first token, as latency's
    # gate (bootstrap ratio, run-to-run margin, min_latency_increase_ms as its floor)
    max_p95_ttft_increase: NonNegative = 0.20
    # below these absolute increases a relative jump is noise (sub-millisecond latencies, fractions of a cent)
    min_latency_increase_ms: NonNegative = 10.0
    min_cost_increase_usd: NonNegative = 0.001


# the generation parameters servers take as whole numbers (SamplingParams' int fields)
INTEGER_PARAMETERS = frozenset({"top_k", "max_tokens", "seed"})


class ParameterRange(Spec):
    name: Name
    min: Finite
    max: Finite
    default: Finite
    step: Positive | None = None
    integer: bool = False

    @property
    def whole(self) -> bool:
        """Tried at whole numbers only: declared so, or a parameter a server refuses as a fraction."""
        return self.integer or self.name in INTEGER_PARAMETERS

    def __post_init__(self) -> None:
        if self.min > self.max:
            raise ValueError("max: expected max >= min")
        if not self.min <= self.default <= self.max:
            raise ValueError("default: expected a default within [min, max]")


# the default search space: used when a tuning session lists no parameters
DEFAULT_SEARCH_SPACE: list[dict[str, Any]] = [
    {"name": "temperature", "min": 0.0, "max": 1.0, "step": 0.1, "default": 0.7},
    {"name": "top_p", "min": 0.1, "max": 1.0, "step": 0.05, "default": 0.9},
    {"name": "top_k", "min": 1, "max": 100, "step": 5, "default": 40, "integer": True},
    {"name": "frequency_penalty", "min": -2.0, "max": 2.0, "step": 0.2, "default": 0.0},
    {"name": "presence_penalty", "min": -2.0, "max": 2.0, "step": 0.2, "default": 0.0},
]


DELTA = "a score delta: scores run from 0 to 1, so a 1-10 scale's 0.5 is 0.05"


class TuneSpec(Spec):
    strategy: TuneStrategy = "grid"
    parameters: list[ParameterRange] = []
    max_experiments: Annotated[int, Meta(ge=1, le=100_000)] = 20
    min_improvement: Annotated[float, Meta(ge=0, lt=1, description=DELTA)] = 0.05
    radius: Positive = 1.0
    require_significance: bool = True
    max_extra_repeats: Annotated[int, Meta(ge=0, le=20)] = 2
    eval_budget_tokens: PositiveInt | None = None
    auto_apply: bool = False
    apply_to: str | None = None

    def __post_init__(self) -> None:
        if self.auto_apply and not self.apply_to:
            raise ValueError("apply_to: expected the file to write accepted values to (auto_apply is on)")
        if self.strategy == "grid":
            for p in self.parameters:
                check_grid_size(p)


MAX_GRID_POINTS = 100_000


def check_grid_size(p: ParameterRange) -> None:
    # a grid sweep lists every point up front; a step that is tiny for its range would fill memory
    if p.step is None:
        return
    points = (p.max - p.min) / p.step
    if not points <= MAX_GRID_POINTS:  # also catches inf from a range wider than a float
        raise ValueError(
            f"parameters: expected at most {MAX_GRID_POINTS} grid points per parameter; {p.name!r} has "
            f"{points:.3g} (step {p.step:g} over [{p.min:g}, {p.max:g}]): use a larger step, or random search"
        )


class StoppingSpec(Spec):
    """rule "sequential": the repeats run in `looks` rounds; after each, the run stops as soon as every
    candidate is clearly better or worse than the baseline (alpha spent across the looks, so the
    false-winner rate stays at alpha), or no better after half of them (futility). rule "race": see
    `rounds`."""

    rule: Literal["fixed", "sequential", "race"] = "fixed"
    alpha: Annotated[float, Meta(gt=0, lt=1)] = 0.05
    looks: Annotated[int, Meta(ge=2, le=20)] = 4
    # rule "race": the cases run in `rounds` rounds, every surviving variant on the same ones; after
    # each round a variant significantly worse than the leader is dropped (alpha split over rounds and
    # comparisons). It ends with one left, when the rest are within `min_improvement` of the leader
    # (0: never), or when the cases run out.
    rounds: Annotated[int, Meta(ge=2, le=100)] = 8
    min_improvement: Annotated[float, Meta(ge=0)] = 0.0
    objective: Literal["score", "pass_rate", "cost_per_pass"] = "score"
    # what alpha bounds in a race: "best", dropping the true best; "any", dropping any variant as good
    # as the best (with all variants equal, dropping any one): a stricter threshold, later drops
    protect: Literal["best", "any"] = "best"


AGE_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}
AGE_EXPECTED = "expected an age such as '7d' or '12h' (a number, then s, m, h, d or w)"


def age_seconds(age: str) -> float:
    """'7d' -> 604800.0 (units s, m, h, d, w); ValueError for anything else."""
    number, unit = age.strip()[:-1], age.strip()[-1:]
    if unit not in AGE_UNITS or not number.replace(".", "", 1).isdigit():
        raise ValueError(AGE_EXPECTED)
    return float(number) * AGE_UNITS[unit]


class ReuseSpec(Spec):
    """[reuse]: a trial whose request fingerprint matches an earlier output is not sent again.
    `from`: "store" (any run in the store), "last" (the latest earlier run of this experiment) or a
    list of run ids; `max_age`: no output made longer ago than this (none: any age)."""

    from_: Literal["store", "last"] | list[Name] = msgspec.field(default="store", name="from")
    max_age: str | None = None  # "7d": checked when the file is read (engine.input.validate)
    enabled: bool = True  # false: the table is kept, reuse is off (`engine run --reuse` turns it on)


class ScheduleSpec(Spec):
    cron: Name = "0 3 * * *"
    enabled: bool = True
    max_experiments_per_run: PositiveInt | None = None
    max_wall_time_s: Positive | None = None


class ExperimentSpec(Spec):
    name: Name
    kind: Literal["experiment", "tune"] = "experiment"
    description: str | None = None
    seed: Seed = 0
    target: TargetSpec = LocalTargetSpec()
    params: dict[str, Any] = {}
    variants: list[VariantSpec] = []
    # list of variant-field dicts (explicit) or dict of lists (cartesian product)
    matrix: list[dict[str, Any]] | dict[str, list[Any]] | None = None
    cases: list[CaseSpec] = []
    suite: SuiteSpec | None = None
    suites: list[SuiteSpec] = []
    overrides_dir: str | None = None  # prompt overrides by variant overrides_tag
    overrides_strict: bool = False  # a tag with no override file is refused, not a warning
    graders: list[GraderSpec] = []
    repeat: RepeatSpec = RepeatSpec()
    budget: BudgetSpec = BudgetSpec()
    execution: ExecutionSpec = ExecutionSpec()
    scoring: ScoringSpec = ScoringSpec()
    gate: GateSpec = GateSpec()
    tune: TuneSpec | None = None
    stopping: StoppingSpec | None = None
    schedule: ScheduleSpec | None = None
    pricing: dict[str, Price] = {}
    setup: list[str] = []
    reuse: ReuseSpec | None = None


def fingerprint(spec: ExperimentSpec) -> str:
    """A stable hash of the spec that ran (sha256 of its msgpack encoding): same spec, same fingerprint."""
    import hashlib  # here: loading OpenSSL costs every command that reads the vocabulary (`engine list`)

    # where outputs may be reused from does not change what is measured: the same experiment, reused or not
    measured = spec if spec.reuse is None else msgspec.structs.replace(spec, reuse=None)
    return hashlib.sha256(msgspec.msgpack.encode(measured)).hexdigest()


def variant_target(default: TargetSpec, variant: VariantSpec) -> TargetSpec:
    """The experiment's target with the variant's overrides applied (its `target` table, its `model`)."""
    if not variant.target and variant.model is None:
        return default
    fields = dict(variant.target)
    if variant.model is not None:
        fields["model"] = variant.model
    return override_target(default, fields)
