"""Make graders from their spec (through the kind's declaration); no graders gets a sensible default."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from engine.actors.graders.base import Grader, GraderClass, MissingGrader
from engine.actors.graders.judge import JudgeBudget
from engine.actors.targets.base import Target
from engine.events.graders import GRADERS, PairwiseGraderSpec
from engine.events.spec import (
    ContainsGraderSpec,
    GraderSpec,
    JudgeGraderSpec,
    LocalTargetSpec,
    TargetSpec,
    override_target,
)

DEFAULT_GRADERS: list[GraderSpec] = [ContainsGraderSpec(case_sensitive=False)]


class GraderContext(msgspec.Struct, kw_only=True):
    """What graders beyond the deterministic ones need: a way to reach the judge model."""

    default_target: TargetSpec = LocalTargetSpec()
    make_target: Callable[[TargetSpec], Target] | None = None
    budget: JudgeBudget = msgspec.field(default_factory=lambda: JudgeBudget(None))


def make_grader(spec: GraderSpec, context: GraderContext | None = None) -> Grader:
    kind = GRADERS.of(spec)
    if not kind.installed:  # named by a stored run: its trials read unscored
        return MissingGrader(spec)
    made: GraderClass = kind.implementation()
    return made.from_spec(spec, context or GraderContext())


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


def grader_specs(specs: list[GraderSpec]) -> list[GraderSpec]:
    """The graders that run per trial, in order: forbidden rules only veto, so with nothing else to
    score, the default check scores the output. A pairwise judge needs two trials' outputs: it runs
    after the trials (engine.runtime.pairwise)."""
    specs = [s for s in specs if not GRADERS.of(s).pairwise]
    return [*DEFAULT_GRADERS, *specs] if all(GRADERS.of(s).veto_only for s in specs) else list(specs)


def make_graders(specs: list[GraderSpec], context: GraderContext | None = None) -> list[Grader]:
    return [make_grader(s, context) for s in grader_specs(specs)]
