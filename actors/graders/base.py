"""The grader interface and the composite verdict of several weighted graders."""

from __future__ import annotations

from typing import Protocol

from events.kinds import GraderResult
from events.spec import CaseSpec, GraderSpec


class Grader(Protocol):
    spec: GraderSpec

    async def grade(self, case: CaseSpec, output: str) -> GraderResult: ...

    async def aclose(self) -> None: ...


def expected_text(spec: GraderSpec, case: CaseSpec) -> str | None:
    """What to compare against: the grader's own value, else the case's expected answer."""
    if spec.value is not None:
        return spec.value
    if case.expected is None:
        return None
    return case.expected if isinstance(case.expected, str) else str(case.expected)


def result(
    spec: GraderSpec, score: float | None, passed: bool, reason: str = "", tokens: int = 0
) -> GraderResult:
    return GraderResult(
        name=spec.name or spec.kind,
        score=score,
        passed=passed,
        weight=spec.weight,
        gate=spec.gate,
        reason=reason,
        tokens=tokens,
    )


def composite(results: list[GraderResult], pass_threshold: float) -> tuple[float | None, bool]:
    """Weighted mean of the scored graders; passes when it reaches the threshold and no gate failed.

    A result without a score (e.g. an unparseable judge answer) is left out of the
    mean; if no grader produced a score the trial is unscored and does not pass.
    """
    scored = [r for r in results if r.score is not None and r.weight > 0]
    total_weight = sum(r.weight for r in scored)
    if not scored or total_weight <= 0:
        return None, False
    score = sum(r.weight * (r.score or 0.0) for r in scored) / total_weight
    gates_ok = all(r.passed for r in results if r.gate)
    return score, gates_ok and score >= pass_threshold
