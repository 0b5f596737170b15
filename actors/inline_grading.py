"""Cheap graders run by the executor worker that made the output, in the same write as the output.

A deterministic grader (exact, contains, regex, json, exit code) takes microseconds. Handing its
output to the grading pool cost more than grading it: a message and a task switch to a grading
worker, a second write batch and a second hop to the log writer per trial. When every grader of a
run is one of these, the executor grades the output itself and its TrialGraded joins the
TrialCompleted in one batch (one transaction: a trial is never logged completed but ungraded).
Judges, commands and Python graders still go through the grading pool (its concurrency, the judge
budget); so do regrades and outputs left ungraded by a crash.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from engine.actors.graders.factory import grader_specs
from engine.actors.graders.grader_protocol import Grader
from engine.events.graders import (
    ContainsGraderSpec,
    ExactGraderSpec,
    ExitCodeGraderSpec,
    ForbiddenGraderSpec,
    GraderSpec,
    JsonGraderSpec,
    RegexGraderSpec,
)

INLINE_KINDS = (ExactGraderSpec, ContainsGraderSpec, RegexGraderSpec, ForbiddenGraderSpec, JsonGraderSpec,
                ExitCodeGraderSpec)  # fmt: skip


@dataclass(frozen=True)
class InlineGrading:
    """How an executor worker grades: its own graders (made once per worker) and the pass mark."""

    make_graders: Callable[[], list[Grader]]
    pass_threshold: float


def grades_inline(specs: list[GraderSpec]) -> bool:
    """Whether every grader that runs per trial is cheap and in-process (no model, no subprocess)."""
    return all(isinstance(spec, INLINE_KINDS) for spec in grader_specs(specs))
