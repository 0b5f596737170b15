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
from collections.abc import Callable
from typing import Any

import msgspec

from engine.actors.graders.grader_protocol import Submission, result
from engine.actors.graders.judge_call import (
    JudgeCaller,
    NoAnswer,
    judge_repeats,
    judge_target,
    response_format,
    with_response_format,
)
from engine.actors.graders.judge_prompt import DEFAULT_RUBRIC, judge_prompt, parse_verdict, rubric_schema
from engine.actors.targets.fingerprint import fingerprint_of
from engine.events.kinds import GraderResult
from engine.events.spec import JudgeGraderSpec


class JudgeGrader:
    @classmethod
    def from_spec(cls, spec: JudgeGraderSpec, context: Any) -> JudgeGrader:
        """The judge model is the experiment's target unless the grader's `judge` table says otherwise."""
        if context.make_target is None:
            raise ValueError("a judge grader needs a target factory")
        target, params = judge_target(context.default_target, spec)
        rubric = list(spec.rubric) or DEFAULT_RUBRIC
        shape = response_format(spec.answer_format, rubric_schema(rubric))
        made = context.make_target(with_response_format(target, spec.answer_format))
        grader = cls(spec, JudgeCaller(made, context.budget, params, shape))
        grader.repeats, grader.model = judge_repeats(spec), getattr(target, "model", "") or target.kind
        grader.identity = {"target": msgspec.to_builtins(target), "params": params, "shape": shape}
        grader.reuse = getattr(context, "reuse_grade", None)
        return grader

    def __init__(self, spec: JudgeGraderSpec, caller: JudgeCaller) -> None:
        self.spec = spec
        self._caller = caller
        self._rubric = list(spec.rubric) or DEFAULT_RUBRIC
        self.repeats, self.model = 1, ""
        self.identity: dict[str, Any] = {}  # the judge target and what it is sent besides the prompt
        self.reuse: Callable[[str], GraderResult | None] | None = None

    async def grade(self, submission: Submission) -> GraderResult:
        case, output = submission.case, submission.output
        system, prompt = judge_prompt(case, output, self._rubric)
        fingerprint = hashlib.blake2b(f"{system}\x00{prompt}".encode(), digest_size=8).hexdigest()
        call = self.call_fingerprint(system, prompt)
        earlier = self.reuse(call) if self.reuse is not None else None
        if earlier is not None:  # the same call an earlier run made: its grade, said to be reused
            return earlier
        graded = await self._judged(case, system, prompt, fingerprint)
        return (
            graded if graded.error else msgspec.structs.replace(graded, fingerprint=call)
        )  # errors: never reused

    def call_fingerprint(self, system: str, prompt: str) -> str:
        """The judge call's fingerprint: its target and params, the grader (rubric, repeats, threshold,
        weight), and the rendered prompt, which holds the output judged."""
        grader = msgspec.to_builtins(self.spec)
        return fingerprint_of({"v": 1, **self.identity, "grader": grader, "system": system, "prompt": prompt})

    async def _judged(self, case: Any, system: str, prompt: str, fingerprint: str) -> GraderResult:
        scores: list[float] = []
        reason, raw, tokens = "", "", 0
        for _ in range(self.repeats):  # the same call again: how much does the judge drift?
            answer = await self._caller.ask(case, system, prompt)
            if isinstance(answer, NoAnswer):  # no answer at all: a budget or a failed call
                missing = _no_answer(self.spec, answer)
                return msgspec.structs.replace(
                    missing, judge_model=self.model, prompt_hash=fingerprint, tokens=tokens
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

    async def aclose(self) -> None:
        await self._caller.aclose()


def _no_answer(spec: JudgeGraderSpec, why: NoAnswer) -> GraderResult:
    if why.error == "judge_budget":
        return result(spec, None, False, "judge token budget exhausted", error="judge_budget")
    return result(spec, None, False, f"judge call failed: {why.detail}", error="judge_failed")
