"""The grader interface and the composite verdict of several weighted graders."""

from __future__ import annotations

from typing import Any, Protocol, Self

import msgspec

from engine.actors.secrets import redact
from engine.events.graders import TextGrader
from engine.events.kinds import GraderResult
from engine.events.spec import CaseSpec, GraderSpec, VariantSpec


class Submission(msgspec.Struct, kw_only=True, frozen=True):
    """What a grader sees of one trial: the case, the output, and what the subject left beside it."""

    case: CaseSpec
    output: str
    variant: VariantSpec | None = None
    repeat: int = 0
    exit_code: int | None = None  # an agent's exit code (command targets)
    metrics: dict[str, float] = {}  # what an agent reported of itself
    workspace: str = ""  # the trial's workspace with the agent's files, when kept for a grader
    workspace_owned: bool = False  # the trial's own (per-trial), not one trials share


class Grader(Protocol):
    spec: GraderSpec

    async def grade(self, submission: Submission) -> GraderResult: ...

    async def aclose(self) -> None: ...


class GraderClass(Protocol):
    """A grader kind's implementation (what its declaration's `impl` names): made from its spec."""

    def from_spec(self, spec: Any, context: Any) -> Grader: ...


class SpecGrader:
    """What most graders are: built from their spec alone, holding nothing to close."""

    def __init__(self, spec: Any) -> None:
        self.spec = spec

    @classmethod
    def from_spec(cls, spec: Any, context: object) -> Self:
        return cls(spec)

    async def aclose(self) -> None:
        return None


class MissingGrader(SpecGrader):
    """A grader of a kind installed no longer (a stored run names it): it cannot judge."""

    async def grade(self, submission: Submission) -> GraderResult:
        why = f"the grader kind {self.spec.kind!r} is not installed"
        return result(self.spec, None, False, why, error="not_installed")


def expected_text(spec: TextGrader, case: CaseSpec) -> str | None:
    """What to compare against: the grader's own value, else the case's expected answer."""
    if spec.value is not None:
        return spec.value
    if case.expected is None:
        return None
    return case.expected if isinstance(case.expected, str) else str(case.expected)


def result(
    spec: GraderSpec,
    score: float | None,
    passed: bool,
    reason: str = "",
    tokens: int = 0,
    *,
    error: str = "",
    veto: bool = False,
) -> GraderResult:
    return GraderResult(
        name=spec.name or spec.kind,
        score=score,
        passed=passed,
        weight=spec.weight,
        gate=spec.gate,
        reason=redact(reason),
        tokens=tokens,
        error=redact(error),
        veto=veto,
    )


def composite(results: list[GraderResult], pass_threshold: float) -> tuple[float | None, bool]:
    """Weighted mean of the scored graders; passes when it reaches the threshold and no gate failed.

    A result without a score (e.g. an unparseable judge answer) is left out of the
    mean; if no grader produced a score the trial is unscored and does not pass. A
    failed veto (a forbidden rule matched) sinks the score to 0: such an output must
    never win on score.
    """
    if any(r.veto for r in results):
        return 0.0, False
    scored = [r for r in results if r.score is not None and r.weight > 0]
    total_weight = sum(r.weight for r in scored)
    if not scored or total_weight <= 0:
        return None, False
    score = sum(r.weight * (r.score or 0.0) for r in scored) / total_weight
    gates_ok = all(r.passed for r in results if r.gate)
    return score, gates_ok and score >= pass_threshold
