"""The experiment file, as typed Structs (the user-facing contract of BRIEF.md).

Unknown fields are rejected so a typo in an experiment file is an error, not a
silently ignored setting.
"""

from __future__ import annotations

import hashlib
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

TargetKind = Literal["openai", "anthropic", "command", "python", "local"]
RepeatStrategy = Literal["mean", "pass_at_k", "confidence_interval"]
GraderKind = Literal["exact", "contains", "regex", "json", "command", "judge", "forbidden", "exit_code"]
# error classes a target may opt into retrying; transient infrastructure errors (connect, network,
# http_429, http_5xx) are always retried, up to max_retries
RetryableClass = Literal["timeout", "malformed_response", "agent_exit", "subject_error"]
TuneStrategy = Literal["grid", "random", "neighborhood"]


class Spec(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """Base for every part of an experiment file."""


class Price(Spec):
    """USD per million tokens, for one model."""

    input_per_mtok: float = 0.0
    output_per_mtok: float = 0.0


class TargetSpec(Spec):
    kind: TargetKind = "local"
    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    # command target: argv list or a shell string; prompt goes via stdin, an arg or a {prompt} template
    command: list[str] | str | None = None
    prompt_via: Literal["stdin", "arg", "template"] = "stdin"
    env: dict[str, str] = {}
    workdir: str | None = None
    # python target: "package.module:function"
    callable: str | None = None
    timeout_s: float = 60.0
    max_retries: int = 3
    concurrency: int | None = None
    headers: dict[str, str] = {}
    price: Price | None = None
    # openai/anthropic: params sent beyond the standard sampling ones (e.g. min_p, repetition_penalty
    # for vLLM or llama.cpp); opt-in, since OpenAI itself rejects fields it does not know
    extra_params: list[str] = []
    # a timeout or a crash of the subject is recorded once; list its class here to retry it too
    retry_on: list[RetryableClass] = []


class SamplingParams(msgspec.Struct, kw_only=True):
    """The generation parameters engine knows, with their types and ranges. `params` tables are
    checked against it; other names pass through untouched (a server may know them)."""

    temperature: Annotated[float, Meta(ge=0, le=2)] | None = None
    top_p: Annotated[float, Meta(ge=0, le=1)] | None = None
    top_k: Annotated[int, Meta(ge=0)] | None = None
    min_p: Annotated[float, Meta(ge=0, le=1)] | None = None
    max_tokens: Annotated[int, Meta(ge=1)] | None = None
    frequency_penalty: Annotated[float, Meta(ge=-2, le=2)] | None = None
    presence_penalty: Annotated[float, Meta(ge=-2, le=2)] | None = None
    seed: Annotated[int, Meta(ge=0, le=2**63 - 1)] | None = None
    stop: str | list[str] | None = None


class VariantSpec(Spec):
    name: str
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
    id: str
    prompt: str
    expected: Any = None
    context: str | None = None
    reference: str | None = None
    tags: list[str] = []
    criteria: dict[str, Any] = {}
    metadata: dict[str, Any] = {}


class SuiteSpec(Spec):
    path: str
    select: list[str] = []
    tags: list[str] = []


class RubricCriterion(Spec):
    name: str
    weight: float
    description: str = ""


class GraderSpec(Spec):
    kind: GraderKind
    name: str | None = None
    weight: float = 1.0
    gate: bool = False
    # exact / contains / regex
    value: str | None = None
    pattern: str | None = None
    case_sensitive: bool = True
    # json: fields that must match (dotted paths) and/or a JSON schema subset
    fields: dict[str, Any] = {}
    schema: dict[str, Any] | None = None
    # command verifier
    commands: list[str] = []
    timeout_s: float = 60.0
    # judge
    rubric: list[RubricCriterion] = []
    judge: dict[str, Any] = {}
    threshold: float | None = None
    # exit_code: the agent's exit codes that pass (default [0]); with such a grader a non-zero
    # exit is graded instead of being recorded as an agent_exit error
    exit_codes: list[int] = []


class RepeatSpec(Spec):
    count: int = 1
    strategy: RepeatStrategy = "mean"
    early_exit: bool = True
    cost_limit_usd: float | None = None


class BudgetSpec(Spec):
    max_trials: int | None = None
    max_wall_time_s: float | None = None
    max_tokens: int | None = None
    max_cost_usd: float | None = None
    judge_max_tokens: int | None = None


class ExecutionSpec(Spec):
    concurrency: int = 16
    judge_concurrency: int = 3
    trial_timeout_s: float | None = None
    # above this share of trials without a usable result (errored, or ungradable) the run exits 1
    max_error_rate: float = 0.1
    # when the first N finished trials all failed to connect, the target is unreachable: stop (0: never)
    unreachable_after: int = 5


class ReplicaAggregation(Spec):
    """How a case's repeats make one verdict (Keystone): all must pass, any may, or a share of them."""

    strategy: Literal["all", "any", "percentage"] = "all"
    min_pass_rate: float = 1.0  # for "percentage"


class ScoringSpec(Spec):
    pass_threshold: float = 0.5
    replica_aggregation: ReplicaAggregation = ReplicaAggregation()


class GateSpec(Spec):
    """Regression thresholds for `engine compare --gate` (seed 004's defaults)."""

    alpha: float = 0.05
    max_pass_rate_drop: float = 0.02
    max_mean_score_drop: float = 0.02
    max_p95_latency_increase: float = 0.20
    max_cost_increase: float = 0.20
    # below these absolute increases a relative jump is noise (sub-millisecond latencies, fractions of a cent)
    min_latency_increase_ms: float = 10.0
    min_cost_increase_usd: float = 0.001


class ParameterRange(Spec):
    name: str
    min: float
    max: float
    default: float
    step: float | None = None
    integer: bool = False


# seed 000's default search space: used when a tuning session lists no parameters
DEFAULT_SEARCH_SPACE: list[dict[str, Any]] = [
    {"name": "temperature", "min": 0.0, "max": 1.0, "step": 0.1, "default": 0.7},
    {"name": "top_p", "min": 0.1, "max": 1.0, "step": 0.05, "default": 0.9},
    {"name": "top_k", "min": 1, "max": 100, "step": 5, "default": 40, "integer": True},
    {"name": "frequency_penalty", "min": -2.0, "max": 2.0, "step": 0.2, "default": 0.0},
    {"name": "presence_penalty", "min": -2.0, "max": 2.0, "step": 0.2, "default": 0.0},
]


class TuneSpec(Spec):
    strategy: TuneStrategy = "grid"
    parameters: list[ParameterRange] = []
    max_experiments: int = 20
    min_improvement: float = 0.05
    radius: float = 1.0
    require_significance: bool = True
    max_extra_repeats: int = 2
    eval_budget_tokens: int | None = None
    auto_apply: bool = False
    apply_to: str | None = None


class ScheduleSpec(Spec):
    cron: str = "0 3 * * *"
    enabled: bool = True
    max_experiments_per_run: int | None = None
    max_wall_time_s: float | None = None


class ExperimentSpec(Spec):
    name: str
    kind: Literal["experiment", "tune"] = "experiment"
    description: str | None = None
    seed: int = 0
    target: TargetSpec = TargetSpec()
    params: dict[str, Any] = {}
    variants: list[VariantSpec] = []
    # list of variant-field dicts (explicit) or dict of lists (cartesian product)
    matrix: list[dict[str, Any]] | dict[str, list[Any]] | None = None
    cases: list[CaseSpec] = []
    suite: SuiteSpec | None = None
    suites: list[SuiteSpec] = []
    overrides_dir: str | None = None  # prompt overrides by variant overrides_tag (seed 002)
    graders: list[GraderSpec] = []
    repeat: RepeatSpec = RepeatSpec()
    budget: BudgetSpec = BudgetSpec()
    execution: ExecutionSpec = ExecutionSpec()
    scoring: ScoringSpec = ScoringSpec()
    gate: GateSpec = GateSpec()
    tune: TuneSpec | None = None
    schedule: ScheduleSpec | None = None
    pricing: dict[str, Price] = {}
    setup: list[str] = []


def fingerprint(spec: ExperimentSpec) -> str:
    """A stable hash of the spec that ran (sha256 of its msgpack encoding): same spec, same fingerprint."""
    return hashlib.sha256(msgspec.msgpack.encode(spec)).hexdigest()
