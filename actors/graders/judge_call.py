"""One question to a judge model: the judge-token budget, retries, and the answer's shape.

Shared by the rubric judge and the pairwise judge. With an `answer_format` other than "text", an
OpenAI-compatible judge is sent a `response_format` built from the answer's JSON Schema, so a small
model's answer is constrained to parseable JSON where the server can do it. A server that refuses
the option (HTTP 4xx) is asked again without it, and is not sent it again.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, NamedTuple

import msgspec

from engine.actors.targets.retry import call_with_retries
from engine.actors.targets.target_protocol import Target, TargetError, TargetRequest
from engine.events.graders import AnswerFormat, PairwiseGraderSpec
from engine.events.spec import (
    CaseSpec,
    JudgeGraderSpec,
    TargetSpec,
    VariantSpec,
    override_target,
)
from engine.events.targets import TARGETS

Schema = dict[str, Any]


class NoAnswer(NamedTuple):
    """Why a judge gave no answer: `error` is judge_budget or judge_failed, `detail` the call's error."""

    error: str
    detail: str = ""


JUDGE_SEED = 1234


@dataclass
class JudgeBudget:
    """Judge tokens shared by every judge worker of a run (budget.judge_max_tokens)."""

    limit: int | None
    used: int = 0
    announced: bool = False

    def exhausted(self) -> bool:
        return self.limit is not None and self.used >= self.limit


def response_format(answer_format: AnswerFormat, schema: Schema) -> dict[str, Any] | None:
    if answer_format == "json":
        return {"type": "json_object"}
    if answer_format == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": "verdict", "schema": schema}}
    if answer_format == "json_object_schema":
        return {"type": "json_object", "schema": schema}
    return None


def with_response_format(target: TargetSpec, answer_format: AnswerFormat) -> TargetSpec:
    """An OpenAI-compatible judge target that forwards `response_format`; others ask in words."""
    if answer_format == "text" or not TARGETS.of(target).answer_formats:
        return target
    if "response_format" in target.extra_params:
        return target
    return msgspec.structs.replace(target, extra_params=[*target.extra_params, "response_format"])


class JudgeCaller:
    def __init__(
        self, target: Target, budget: JudgeBudget, params: dict[str, Any], shape: dict[str, Any] | None
    ) -> None:
        self._target, self._budget = target, budget
        self._params = {"temperature": 0.0, "seed": JUDGE_SEED, **params}
        self._shape = shape  # the response_format to send, until a server refuses it

    async def ask(self, case: CaseSpec, system: str, prompt: str) -> tuple[str, int] | NoAnswer:
        """(answer, tokens), or why there is none."""
        if self._budget.exhausted():
            return NoAnswer("judge_budget")
        try:
            response = await self._call(case, system, prompt)
        except TargetError as exc:
            if self._shape is None or exc.error_class != "http_4xx":
                return NoAnswer("judge_failed", exc.message[:200])
            self._shape = None  # the server does not take response_format: ask in words from now on
            try:
                response = await self._call(case, system, prompt)
            except TargetError as again:
                return NoAnswer("judge_failed", again.message[:200])
        tokens = response.tokens_in + response.tokens_out
        self._budget.used += tokens
        return response.text, tokens

    async def _call(self, case: CaseSpec, system: str, prompt: str) -> Any:
        params = self._params if self._shape is None else {**self._params, "response_format": self._shape}
        request = TargetRequest(
            run_id="judge", variant=VariantSpec(name="judge"), case=case, repeat=0, prompt=prompt,
            system=system, params=params, seed=int(self._params["seed"]),
            timeout_s=float(self._params.get("timeout_s", 120)),
        )  # fmt: skip
        return await call_with_retries(self._target, request, max_retries=3, rng=random.Random(case.id))

    async def aclose(self) -> None:
        await self._target.aclose()


def judge_target(
    default: TargetSpec, spec: JudgeGraderSpec | PairwiseGraderSpec
) -> tuple[TargetSpec, dict[str, Any]]:
    """The judge's target (the experiment's, with the grader's `judge` table over it) and its params."""
    settings: dict[str, Any] = dict(spec.judge)
    params = settings.pop("params", {})
    settings.pop("repeats", None)  # the grader's, not the target's (see judge_repeats)
    return override_target(default, settings), params


def judge_repeats(spec: JudgeGraderSpec) -> int:
    """`repeats` on the grader, or `judge.repeats` in its judge table (1 to 10)."""
    found = spec.judge.get("repeats", spec.repeats)
    if isinstance(found, bool) or not isinstance(found, int) or not 1 <= found <= 10:
        raise ValueError(f"judge.repeats: expected an integer from 1 to 10, got {found!r}")
    return found
