"""The case's own graders: `criteria.graders` (an AgentV test's assertions), run on its outputs.

Engine's graders are the experiment's; an eval file's assertions differ from test to test, so this
grader builds, per case, the graders that case lists (the same kinds as `[[graders]]`, judges
included) and combines them: passed when every one passed, scored by their weighted mean.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from engine.actors.graders.grader_protocol import Grader, Submission, result
from engine.events.graders import CaseGraderSpec, ContainsGraderSpec, GraderSpec
from engine.events.kind_convert import convert_kinded
from engine.events.kinds import GraderResult
from engine.events.spec import CaseSpec

EXPECTED = ContainsGraderSpec(name="expected_output", case_sensitive=False)


class CaseGrader:
    spec: CaseGraderSpec

    def __init__(self, spec: CaseGraderSpec, context: Any) -> None:
        self.spec = spec
        self._context = context
        self._built: dict[str, list[Grader]] = {}  # by the case's grader list: built once

    @classmethod
    def from_spec(cls, spec: CaseGraderSpec, context: Any) -> CaseGrader:
        return cls(spec, context)

    async def grade(self, submission: Submission) -> GraderResult:
        graders = self._graders(submission.case)
        if not graders:  # nothing to check here: the other graders decide, and a gate does not veto
            return result(self.spec, None, True, "no assertions")
        results = [await grader.grade(submission) for grader in graders]
        scored = [r for r in results if r.score is not None and r.weight > 0]
        weight = sum(r.weight for r in scored)
        score = sum(r.weight * (r.score or 0.0) for r in scored) / weight if weight > 0 else None
        failed = [r for r in results if not r.passed]
        reason = "; ".join(f"{r.name}: {r.reason or r.error or 'failed'}" for r in failed)
        passed = not failed and not any(r.veto for r in results)
        tokens = sum(r.tokens for r in results)
        return result(self.spec, 0.0 if score is None and failed else score, passed, reason, tokens)

    def _graders(self, case: CaseSpec) -> list[Grader]:
        from engine.actors.graders.factory import make_grader

        specs = case_graders(case)
        if self.spec.expected and case.expected is not None:
            specs = [EXPECTED, *specs]
        key = json.dumps(msgspec.to_builtins(specs), sort_keys=True)
        if key not in self._built:
            self._built[key] = [make_grader(spec, self._context) for spec in specs]
        return self._built[key]

    async def aclose(self) -> None:
        for graders in self._built.values():
            for grader in graders:
                await grader.aclose()
        self._built.clear()


def case_graders(case: CaseSpec) -> list[GraderSpec]:
    """The grader specs a case lists under `criteria.graders` (checked when the file was loaded)."""
    listed = case.criteria.get("graders", [])
    return convert_kinded(listed, list[GraderSpec]) if listed else []  # type: ignore[no-any-return]
