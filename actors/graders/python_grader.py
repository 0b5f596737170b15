"""A Python evaluator: fn(case, output, context) scores a trial (sync functions run in a thread).

The context is the trial's Submission: `variant` (name, flags, params, overrides_tag), `repeat`,
`exit_code` and `metrics`, so one evaluator can judge each variant by its own settings. It returns a
bool (passed), a number (a score in [0, 1]) or a mapping {score, passed, reason}. A raise or an
unusable answer is a grading error (`evaluator_failed`), never a failed trial.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping
from typing import Any

import trio

from engine.actors.graders.grader_protocol import SpecGrader, Submission, result
from engine.actors.targets.python_target import import_callable, private_copy
from engine.events.graders import PythonGraderSpec
from engine.events.kinds import GraderResult

FAILED = "evaluator_failed"


class PythonGrader(SpecGrader):
    spec: PythonGraderSpec

    def __init__(self, spec: PythonGraderSpec, fn: Callable[..., Any]) -> None:
        super().__init__(spec)
        self._fn = fn

    @classmethod
    def from_spec(cls, spec: PythonGraderSpec, context: object) -> PythonGrader:  # type: ignore[override]
        # the run's target context: callables the embedding app registered, the experiment's folder
        targets = getattr(getattr(context, "make_target", None), "context", None)
        callables: Mapping[str, Callable[..., Any]] = getattr(targets, "callables", {}) or {}
        base_dir = getattr(targets, "base_dir", None)
        fn = callables.get(spec.callable) or import_callable(spec.callable, base_dir)
        return cls(spec, fn)

    async def grade(self, submission: Submission) -> GraderResult:
        submission = private_copy(submission)  # the evaluator may change what it is given
        args = (submission.case, submission.output, submission)
        try:
            if inspect.iscoroutinefunction(self._fn):
                value = await self._fn(*args)
            else:
                value = await trio.to_thread.run_sync(self._fn, *args, abandon_on_cancel=True)
        except Exception as exc:  # the evaluator's own bug: a grading error, the run goes on
            return result(self.spec, None, False, f"{type(exc).__name__}: {exc}"[:500], error=FAILED)
        return self._verdict(value)

    def _verdict(self, value: Any) -> GraderResult:
        reason = ""
        passed: bool | None = None
        if isinstance(value, Mapping):
            reason, passed = str(value.get("reason", "")), value.get("passed")
            value = value.get("score", passed)
        if isinstance(value, bool):
            return result(self.spec, float(value), value if passed is None else bool(passed), reason)
        if isinstance(value, int | float) and math.isfinite(value) and 0 <= value <= 1:
            verdict = bool(passed) if passed is not None else value >= 0.5
            return result(self.spec, float(value), verdict, reason)
        why = f"expected a bool, a score in [0, 1] or {{score, passed, reason}}; got {value!r:.100}"
        return result(self.spec, None, False, why, error=FAILED)
