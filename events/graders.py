"""How an output is judged: one spec per grader kind, tagged on `kind`, each declared once below
with its implementation and what it can do (`GraderKind`); `GraderSpec` is the union of them.

Cross-field rules (a regex that compiles, a forbidden rule with something to forbid, rubric
weights that add up) are checked in `__post_init__`, which msgspec reports as a validation error
at the grader's path.
"""

import re
from typing import Annotated, Any, Literal

from msgspec import Meta

from engine.events.kind_registry import Kind, KindRegistry
from engine.events.sandbox import (
    NetworkPolicy,
    SandboxKind,
    SandboxLimits,
    SandboxPolicy,
    check_policy,
    network_of,
)
from engine.events.spec_base import Fraction, Kinded, Name, Seconds, Spec

Weight = Annotated[float, Meta(ge=0, le=1e6)]


class RubricCriterion(Spec):
    name: Name
    weight: Weight
    description: str = ""


class BaseGrader(Kinded):
    name: str | None = None
    weight: Weight = 1.0
    gate: bool = False  # a failed gate fails the trial whatever the composite score


class TextGrader(BaseGrader):
    value: str | None = None  # what to compare against; the case's `expected` when not set
    case_sensitive: bool = True


class ExactGraderSpec(TextGrader, tag="exact"):
    pass


class ContainsGraderSpec(TextGrader, tag="contains"):
    """Every expected string must appear (a list in `expected` means all of them)."""


def _compiles(pattern: str) -> None:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"pattern: expected a valid regular expression ({exc})") from None


class RegexGraderSpec(BaseGrader, tag="regex", kw_only=True):
    pattern: str
    case_sensitive: bool = True

    def __post_init__(self) -> None:
        _compiles(self.pattern)


class ForbiddenGraderSpec(TextGrader, tag="forbidden"):
    """A veto: an output containing `value` or matching `pattern` fails, and its score sinks to 0."""

    pattern: str | None = None

    def __post_init__(self) -> None:
        if self.value is None and self.pattern is None:
            raise ValueError("value: expected the forbidden text (or a `pattern`) for a forbidden rule")
        if self.pattern is not None:
            _compiles(self.pattern)


class JsonGraderSpec(BaseGrader, tag="json"):
    """The output (or the first JSON object in it) must parse, match `fields` and the schema subset."""

    fields: dict[str, Any] = {}
    schema: dict[str, Any] | None = None


class CommandGraderSpec(BaseGrader, tag="command"):
    """A verifier: shell commands run in a temp dir holding output.txt; exit 0 means the check passed.
    With `workspace`, they run in the trial's workspace instead, beside the files the agent wrote
    (a command agent's; the output is then at $ENGINE_OUTPUT_FILE only)."""

    commands: list[str] = []
    timeout_s: Seconds = 60.0
    value: str | None = None  # ENGINE_EXPECTED for the commands; the case's `expected` when not set
    # the commands' sandbox, as a command target's (engine.events.sandbox): they may run the agent's code
    sandbox: SandboxKind = "none"
    network: NetworkPolicy | None = None
    limits: SandboxLimits = SandboxLimits()
    pass_env: list[Name] = []

    def __post_init__(self) -> None:
        check_policy(self.policy)

    @property
    def policy(self) -> SandboxPolicy:
        network = network_of(self.sandbox, self.network)
        return SandboxPolicy(kind=self.sandbox, network=network, limits=self.limits, pass_env=self.pass_env)
    workspace: bool = False


# how a judge is asked to shape its answer (OpenAI-compatible servers): "text" asks in words only;
# "json" sends response_format {"type": "json_object"} (OpenAI, vLLM, Ollama, llama.cpp); "json_schema"
# the answer's JSON Schema the OpenAI way (OpenAI, vLLM, llama.cpp's own server); "json_object_schema"
# the schema inside json_object (llama-cpp-python's server, which then constrains the model by
# grammar). A server that refuses the option (HTTP 4xx) is asked again in words.
AnswerFormat = Literal["text", "json", "json_schema", "json_object_schema"]


class JudgeGraderSpec(BaseGrader, tag="judge"):
    """LLM-as-judge: a rubric of weighted criteria scored 1-10, mapped to [0, 1]."""

    rubric: list[RubricCriterion] = []
    judge: dict[str, Any] = {}  # target fields over the experiment's target, `params`, and `repeats`
    threshold: Fraction | None = None
    # score each output this many times (also `judge.repeats`): the report gives the judges' agreement
    repeats: Annotated[int, Meta(ge=1, le=10)] = 1
    answer_format: AnswerFormat = "text"

    def __post_init__(self) -> None:
        if self.rubric and sum(c.weight for c in self.rubric) <= 0:
            raise ValueError("rubric: expected weights that add up to more than 0")


class PairwiseGraderSpec(BaseGrader, tag="pairwise"):
    """An LLM judge that sees a candidate's and the baseline's outputs of one case and repeat side by
    side and names the better one. Judged once every trial has run; reported as wins, ties and
    losses (a sign test) per candidate, apart from the per-trial score."""

    question: str = "Which response answers the user's request better: more correct, complete and clear?"
    judge: dict[str, Any] = {}  # target fields over the experiment's target, and `params`
    baseline: str | None = None  # the variant every other one is judged against (default: the first)
    answer_format: AnswerFormat = "text"


class ExitCodeGraderSpec(BaseGrader, tag="exit_code"):
    """The agent's exit code must be one of `exit_codes` (default [0]); with this grader a non-zero
    exit is graded instead of being recorded as an agent_exit error."""

    exit_codes: list[Annotated[int, Meta(ge=-(2**31), le=2**31)]] = []


class CaseGraderSpec(BaseGrader, tag="case"):
    """The graders each case carries in `criteria.graders` (an AgentV test's assertions), run on that
    case's outputs: passed when all pass, scored by their weighted mean. With `expected`, the case's
    expected answer is checked too (contains, case-insensitive). A case with nothing to check is left
    to the other graders (no score, and no veto when this grader is a gate)."""

    expected: bool = False


class PythonGraderSpec(BaseGrader, tag="python", kw_only=True):
    """An evaluator in Python: 'module:function' (looked up on sys.path, then beside the experiment
    file) or a name registered through the embedding API. It is called as fn(case, output, context),
    context holding the variant (name, flags, params, overrides_tag), the repeat and the agent's metrics;
    it returns a bool, a score in [0, 1], or {score, passed, reason}."""

    callable: Name


class GraderKind(Kind, frozen=True):
    """A grader kind: its spec, its implementation (a class with `from_spec(spec, context)`,
    `grade(submission)` and `aclose()`) and what the rest of engine needs to know of it."""

    calls_model: bool = False  # an LLM judge: graded after the cheap graders, under the judge budget,
    # on the coordinator (never on a Ray worker); its `judge` table names the target it calls
    pairwise: bool = False  # judges two variants' outputs side by side once every trial has run
    veto_only: bool = False  # only vetoes: with nothing else to score, the default check scores
    reads_exit_code: bool = False  # judges the agent's exit code: a non-zero exit is graded, not an error
    needs_expected: bool = False  # without its own `value` it compares with each case's `expected`
    runs_case_graders: bool = False  # runs the graders each case carries in `criteria.graders`
    callable_field: str | None = None  # the field naming a Python callable ('module:function')
    # the field that, left empty on the grader, each case's criteria must give (command: "commands")
    case_fallback: str | None = None
    repeats_judge: bool = False  # scores each output `repeats` times (1 to 10, or judge.repeats)

    def __post_init__(self) -> None:
        fields = self.spec.__struct_fields__
        needed = [self.case_fallback] if self.case_fallback else []
        needed += ["judge", "repeats"] if self.repeats_judge else []
        if missing := [name for name in needed if name not in fields]:
            raise TypeError(f"the {self.name!r} grader kind's spec has no field {', '.join(missing)}")


_HERE = "engine.actors.graders."
_VERIFY = {"commands": ["true"]}
_PYTHON = {"callable": "json:dumps"}
_JUDGE = {"judge": {"kind": "openai", "base_url": "{url}", "model": "m", "params": {"timeout_s": 0.05}}}
BUILTIN_GRADERS = [
    GraderKind(ExactGraderSpec, _HERE + "deterministic:ExactGrader", needs_expected=True),
    GraderKind(ContainsGraderSpec, _HERE + "deterministic:ContainsGrader", needs_expected=True),
    GraderKind(RegexGraderSpec, _HERE + "deterministic:RegexGrader", {"pattern": "^a"}),
    GraderKind(ForbiddenGraderSpec, _HERE + "deterministic:ForbiddenGrader", {"value": "x"}, veto_only=True),
    GraderKind(JsonGraderSpec, _HERE + "deterministic:JsonGrader"),
    GraderKind(
        CommandGraderSpec,
        _HERE + "command_grader:CommandGrader",
        _VERIFY,
        reads_exit_code=True,
        case_fallback="commands",
    ),
    GraderKind(JudgeGraderSpec, _HERE + "judge:JudgeGrader", _JUDGE, calls_model=True, repeats_judge=True),
    GraderKind(PairwiseGraderSpec, _HERE + "pairwise:PairwiseJudge", _JUDGE, calls_model=True, pairwise=True),
    GraderKind(ExitCodeGraderSpec, _HERE + "deterministic:ExitCodeGrader", reads_exit_code=True),
    GraderKind(CaseGraderSpec, _HERE + "case:CaseGrader", runs_case_graders=True),
    GraderKind(PythonGraderSpec, _HERE + "python_grader:PythonGrader", _PYTHON, callable_field="callable"),
]
GRADERS: KindRegistry[GraderKind] = KindRegistry(
    "grader kind", "engine.graders", BaseGrader, BUILTIN_GRADERS, GraderKind
)
GraderSpec = GRADERS.union()
GRADER_KINDS = {k.name: k.spec for k in BUILTIN_GRADERS}
