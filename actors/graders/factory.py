"""Make graders from their spec; a spec with no graders gets a sensible default."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from engine.actors.graders.base import Grader
from engine.actors.graders.deterministic import (
    ContainsGrader,
    ExactGrader,
    ExitCodeGrader,
    ForbiddenGrader,
    JsonGrader,
    RegexGrader,
)
from engine.actors.graders.judge import JudgeBudget, JudgeGrader
from engine.actors.targets.base import Target
from engine.events.spec import GraderSpec, TargetSpec

_KINDS = {
    "exact": ExactGrader,
    "contains": ContainsGrader,
    "regex": RegexGrader,
    "json": JsonGrader,
    "forbidden": ForbiddenGrader,
    "exit_code": ExitCodeGrader,
}

DEFAULT_GRADERS = [GraderSpec(kind="contains", case_sensitive=False)]


class GraderContext(msgspec.Struct, kw_only=True):
    """What graders beyond the deterministic ones need: a way to reach the judge model."""

    default_target: TargetSpec = TargetSpec()
    make_target: Callable[[TargetSpec], Target] | None = None
    budget: JudgeBudget = msgspec.field(default_factory=lambda: JudgeBudget(None))


def make_grader(spec: GraderSpec, context: GraderContext | None = None) -> Grader:
    if spec.kind == "command":
        from engine.actors.graders.command import CommandGrader

        return CommandGrader(spec)
    if spec.kind == "judge":
        return _judge(spec, context or GraderContext())
    maker = _KINDS.get(spec.kind)
    if maker is None:
        raise ValueError(f"grader kind {spec.kind!r} is not available in this build")
    return maker(spec)


def judge_target(default: TargetSpec, spec: GraderSpec) -> tuple[TargetSpec, dict[str, Any]]:
    """The judge's target (the experiment's, with the grader's `judge` table over it) and its params."""
    settings: dict[str, Any] = dict(spec.judge)
    params = settings.pop("params", {})
    return msgspec.convert({**msgspec.to_builtins(default), **settings}, TargetSpec), params


def _judge(spec: GraderSpec, context: GraderContext) -> Grader:
    if context.make_target is None:
        raise ValueError("a judge grader needs a target factory")
    target, params = judge_target(context.default_target, spec)
    return JudgeGrader(spec, context.make_target(target), context.budget, params)


def make_graders(specs: list[GraderSpec], context: GraderContext | None = None) -> list[Grader]:
    # forbidden rules only veto; with nothing else to score, the default check scores the output
    if all(s.kind == "forbidden" for s in specs):
        specs = [*DEFAULT_GRADERS, *specs]
    return [make_grader(s, context) for s in specs]
