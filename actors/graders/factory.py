"""Make graders from their spec (through the kind's declaration); no graders gets a sensible default."""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from engine.actors.graders.grader_protocol import Grader, GraderClass, MissingGrader
from engine.actors.graders.judge_call import JudgeBudget
from engine.actors.targets.target_protocol import Target
from engine.events.graders import GRADERS
from engine.events.kinds import GraderResult
from engine.events.spec import (
    ContainsGraderSpec,
    GraderSpec,
    LocalTargetSpec,
    TargetSpec,
)

DEFAULT_GRADERS: list[GraderSpec] = [ContainsGraderSpec(case_sensitive=False)]


class GraderContext(msgspec.Struct, kw_only=True):
    """What graders beyond the deterministic ones need: a way to reach the judge model."""

    default_target: TargetSpec = LocalTargetSpec()
    make_target: Callable[[TargetSpec], Target] | None = None
    budget: JudgeBudget = msgspec.field(default_factory=lambda: JudgeBudget(None))
    # [reuse]: an earlier grade of the same judge call (by its fingerprint), or None: the judge is asked
    reuse_grade: Callable[[str], GraderResult | None] | None = None


def make_grader(spec: GraderSpec, context: GraderContext | None = None) -> Grader:
    kind = GRADERS.of(spec)
    if not kind.installed:  # named by a stored run: its trials read unscored
        return MissingGrader(spec)
    made: GraderClass = kind.implementation()
    return made.from_spec(spec, context or GraderContext())


def grader_specs(specs: list[GraderSpec]) -> list[GraderSpec]:
    """The graders that run per trial, in order: forbidden rules only veto, so with nothing else to
    score, the default check scores the output. A pairwise judge needs two trials' outputs: it runs
    after the trials (engine.runtime.pairwise_round)."""
    specs = [s for s in specs if not GRADERS.of(s).pairwise]
    return [*DEFAULT_GRADERS, *specs] if all(GRADERS.of(s).veto_only for s in specs) else list(specs)


def make_graders(specs: list[GraderSpec], context: GraderContext | None = None) -> list[Grader]:
    return [make_grader(s, context) for s in grader_specs(specs)]
