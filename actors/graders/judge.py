"""LLM-as-judge: a rubric of weighted criteria scored 1-10 by a separate judge model.

The subject's output is wrapped in <subject_response> boundary tags with XML
metacharacters escaped, so the evaluated model cannot smuggle instructions to
the judge. The judge answers JSON; the score is clamped to [1, 10] and mapped to
[0, 1]. An unparseable or non-finite answer leaves the trial unscored (counted,
not guessed). Judge calls default to temperature 0 and a fixed seed.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from typing import Any

import msgspec

from engine.actors.graders.base import Submission, result
from engine.actors.graders.judge_prompt import DEFAULT_RUBRIC, judge_prompt, parse_verdict
from engine.actors.targets.base import Target, TargetError, TargetRequest
from engine.actors.targets.retry import call_with_retries
from engine.events.kinds import GraderResult
from engine.events.spec import CaseSpec, JudgeGraderSpec, VariantSpec

JUDGE_SEED = 1234


@dataclass
class JudgeBudget:
    """Judge tokens shared by every judge worker of a run (budget.judge_max_tokens)."""

    limit: int | None
    used: int = 0
    announced: bool = False

    def exhausted(self) -> bool:
        return self.limit is not None and self.used >= self.limit


class JudgeGrader:
    @classmethod
    def from_spec(cls, spec: JudgeGraderSpec, context: Any) -> JudgeGrader:
        """The judge model is the experiment's target unless the grader's `judge` table says otherwise."""
        from engine.actors.graders.factory import judge_repeats, judge_target

        if context.make_target is None:
            raise ValueError("a judge grader needs a target factory")
        target, params = judge_target(context.default_target, spec)
        grader = cls(spec, context.make_target(target), context.budget, params)
        grader.repeats, grader.model = judge_repeats(spec), getattr(target, "model", "") or target.kind
        return grader

    def __init__(
        self, spec: JudgeGraderSpec, target: Target, budget: JudgeBudget, params: dict[str, Any]
    ) -> None:
        self.spec = spec
        self._target = target
        self._budget = budget
        self._rubric = list(spec.rubric) or DEFAULT_RUBRIC
        self._params = {"temperature": 0.0, "seed": JUDGE_SEED, **params}
        self.repeats, self.model = 1, ""

    async def grade(self, submission: Submission) -> GraderResult:
        case, output = submission.case, submission.output
        system, prompt = judge_prompt(case, output, self._rubric)
        fingerprint = hashlib.blake2b(f"{system}\x00{prompt}".encode(), digest_size=8).hexdigest()
        scores: list[float] = []
        reason, raw, tokens = "", "", 0
        for _ in range(self.repeats):  # the same call again: how much does the judge drift?
            answer = await self._ask(case, system, prompt)
            if isinstance(answer, GraderResult):  # no answer at all: a budget or a failed call
                return msgspec.structs.replace(
                    answer, judge_model=self.model, prompt_hash=fingerprint, tokens=tokens
                )
            text, used = answer
            tokens += used
            raw = raw or text[:500]
            verdict = parse_verdict(text, self._rubric)
            if verdict is not None:
                scores.append((verdict[0] - 1.0) / 9.0)
                reason = reason or verdict[1]
        record = {"judge_model": self.model, "prompt_hash": fingerprint, "raw": raw}
        if not scores:
            why = f"unparseable judge answer: {json.dumps(raw[:120])}"
            return msgspec.structs.replace(
                result(self.spec, None, False, why, tokens, error="judge_unparseable"), **record
            )
        score = sum(scores) / len(scores)
        threshold = self.spec.threshold if self.spec.threshold is not None else 0.5
        spread = round(max(scores) - min(scores), 6) if self.repeats > 1 else None
        graded = result(self.spec, round(score, 6), score >= threshold, reason, tokens)
        return msgspec.structs.replace(graded, spread=spread, **record)

    async def _ask(self, case: CaseSpec, system: str, prompt: str) -> tuple[str, int] | GraderResult:
        if self._budget.exhausted():
            return result(self.spec, None, False, "judge token budget exhausted", error="judge_budget")
        request = TargetRequest(
            run_id="judge", variant=VariantSpec(name="judge"), case=case, repeat=0, prompt=prompt,
            system=system, params=self._params, seed=int(self._params["seed"]),
            timeout_s=float(self._params.get("timeout_s", 120)),
        )  # fmt: skip
        try:
            response = await call_with_retries(
                self._target, request, max_retries=3, rng=random.Random(case.id)
            )
        except TargetError as exc:
            reason = f"judge call failed: {exc.message[:200]}"
            return result(self.spec, None, False, reason, error="judge_failed")
        tokens = response.tokens_in + response.tokens_out
        self._budget.used += tokens
        return response.text, tokens

    async def aclose(self) -> None:
        await self._target.aclose()
