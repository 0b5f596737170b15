"""Make graders from their spec; a spec with no graders gets a sensible default."""

from __future__ import annotations

from actors.graders.base import Grader
from actors.graders.deterministic import ContainsGrader, ExactGrader, JsonGrader, RegexGrader
from events.spec import GraderSpec

_KINDS = {"exact": ExactGrader, "contains": ContainsGrader, "regex": RegexGrader, "json": JsonGrader}

DEFAULT_GRADERS = [GraderSpec(kind="contains", case_sensitive=False)]


def make_grader(spec: GraderSpec) -> Grader:
    maker = _KINDS.get(spec.kind)
    if maker is None:
        raise ValueError(f"grader kind {spec.kind!r} is not available in this build")
    return maker(spec)


def make_graders(specs: list[GraderSpec]) -> list[Grader]:
    return [make_grader(s) for s in (specs or DEFAULT_GRADERS)]
