"""The pairwise judge: one call sees a candidate's and the baseline's outputs of the same case and
repeat, in an order drawn from the candidate trial's seed, and names the better one.

Which output is shown first is recorded with the verdict, so a judge that leans to a position is
measured (the report's position statistics) and, over many trials, cancelled out.

With [reuse], a verdict an earlier run got for the very same call (judge target and params, the
grader, the prompt with both outputs in their order, the position of the candidate) is taken as it
was, with `reused_from` naming the run that asked; errors are never reused.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec

from engine.actors.graders.judge_call import (
    JudgeBudget,
    JudgeCaller,
    NoAnswer,
    judge_target,
    response_format,
    with_response_format,
)
from engine.actors.graders.pairwise_prompt import PREFERENCE_SCHEMA, pairwise_prompt, parse_preference
from engine.actors.targets.fingerprint import fingerprint_of
from engine.actors.targets.target_protocol import Target
from engine.events import kinds as k
from engine.events.graders import PairwiseGraderSpec
from engine.events.spec import CaseSpec, TargetSpec

MakeTarget = Callable[[TargetSpec], Target]

FROM_CANDIDATE = {"A": {"A": "candidate", "B": "baseline"}, "B": {"A": "baseline", "B": "candidate"}}


@dataclass(frozen=True)
class Pair:
    run_id: str
    variant: str
    baseline: str
    case: CaseSpec
    repeat: int
    seed: int  # the candidate trial's: it decides the order the two outputs are shown in
    candidate_output: str
    baseline_output: str


def candidate_position(seed: int) -> str:
    return "A" if seed % 2 == 0 else "B"


class PairwiseJudge:
    def __init__(self, spec: PairwiseGraderSpec, caller: JudgeCaller, model: str) -> None:
        self.spec, self.name, self.model = spec, spec.name or "pairwise", model
        self._caller = caller
        self.identity: dict[str, Any] = {}  # the judge target and what it is sent besides the prompt
        self.reuse: Callable[[str], k.PairwiseJudged | None] | None = None

    @classmethod
    def build(
        cls, spec: PairwiseGraderSpec, default: TargetSpec, make_target: MakeTarget, budget: JudgeBudget
    ) -> PairwiseJudge:
        """The judge model is the experiment's target unless the grader's `judge` table says otherwise."""
        target, params = judge_target(default, spec)
        shape = response_format(spec.answer_format, PREFERENCE_SCHEMA)
        made = make_target(with_response_format(target, spec.answer_format))
        model = getattr(target, "model", "") or target.kind
        judge = cls(spec, JudgeCaller(made, budget, params, shape), model)
        judge.identity = {"target": msgspec.to_builtins(target), "params": params, "shape": shape}
        return judge

    async def judge(self, pair: Pair) -> k.PairwiseJudged:
        position = candidate_position(pair.seed)
        first, second = (
            (pair.candidate_output, pair.baseline_output)
            if position == "A"
            else (pair.baseline_output, pair.candidate_output)
        )
        system, prompt = pairwise_prompt(pair.case, first, second, self.spec.question)
        fingerprint = hashlib.blake2b(f"{system}\x00{prompt}".encode(), digest_size=8).hexdigest()
        verdict = k.PairwiseJudged(
            run_id=pair.run_id, ts=time.time(), grader=self.name, variant=pair.variant,
            baseline=pair.baseline, case=pair.case.id, repeat=pair.repeat,
            candidate_position=position, winner="", judge_model=self.model, prompt_hash=fingerprint,
        )  # type: ignore[arg-type]  # fmt: skip
        call = fingerprint_of({"v": 1, "pairwise": msgspec.to_builtins(self.spec), **self.identity,
                               "position": position, "system": system, "prompt": prompt})  # fmt: skip
        earlier = self.reuse(call) if self.reuse is not None else None
        if earlier is not None:  # the same call an earlier run made: its verdict, said to be reused
            taken = {"winner": earlier.winner, "reason": earlier.reason, "raw": earlier.raw}
            return _replace(verdict, **taken, tokens=earlier.tokens, fingerprint=call,
                            reused_from=earlier.reused_from)  # fmt: skip
        verdict = _replace(verdict, fingerprint=call)
        answer = await self._caller.ask(pair.case, system, prompt)
        if isinstance(answer, NoAnswer):
            return _replace(verdict, error=answer.error, reason=answer.detail)
        text, tokens = answer
        parsed = parse_preference(text)
        if parsed is None:
            return _replace(verdict, raw=text[:500], tokens=tokens, error="judge_unparseable")
        choice, reason = parsed
        winner = "tie" if choice == "tie" else FROM_CANDIDATE[position][choice]
        return _replace(verdict, winner=winner, reason=reason, raw=text[:500], tokens=tokens)

    async def aclose(self) -> None:
        await self._caller.aclose()


def _replace(event: k.PairwiseJudged, **fields: Any) -> k.PairwiseJudged:
    return msgspec.structs.replace(event, **fields)
