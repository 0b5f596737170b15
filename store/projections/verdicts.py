"""Per-case verdicts: pass, fail, flaky, error or ungraded, from a case's repeats.

A case's repeats are aggregated by `scoring.replica_aggregation`: "all" (every graded
repeat passed), "any" (one did) or "percentage" (at least `min_pass_rate` of them). A case
that is neither a clean pass nor a clean fail is flaky; one whose every attempt errored
is an error, not a failure.
"""

from __future__ import annotations

from typing import Literal

from engine.events.report import CaseVerdicts
from engine.events.spec import ReplicaAggregation
from engine.store.projections.run_state import Cell

Verdict = Literal["pass", "fail", "flaky", "error", "ungraded"]


def case_verdict(cell: Cell, aggregation: ReplicaAggregation) -> Verdict | None:
    """The verdict of one variant x case cell; None while nothing about it is known yet."""
    scored = cell.scored()
    runs, passes = scored.bit_count(), (cell.passed & scored).bit_count()
    return verdict_from_counts(runs, passes, bool(cell.graded), bool(cell.failed), aggregation)


def verdict_from_counts(
    runs: int, passes: int, graded: bool, failed: bool, aggregation: ReplicaAggregation
) -> Verdict | None:
    """The one definition of a case's verdict (the report, flaky_cases and the web view use it):
    `runs` scored repeats of which `passes` passed; `graded`/`failed`: any repeat graded/errored."""
    if not runs:
        if graded:  # outputs, but no grader could score any of them
            return "ungraded"
        return "error" if failed else None
    if aggregation.strategy == "any":
        return "pass" if passes else "fail"
    bar = 1.0 if aggregation.strategy == "all" else aggregation.min_pass_rate
    if passes / runs >= bar:
        return "pass"
    return "fail" if passes == 0 else "flaky"


def count_verdicts(cells: list[Cell], aggregation: ReplicaAggregation) -> CaseVerdicts:
    counts = {"pass": 0, "fail": 0, "flaky": 0, "error": 0, "ungraded": 0}
    for cell in cells:
        verdict = case_verdict(cell, aggregation)
        if verdict is not None:
            counts[verdict] += 1
    return CaseVerdicts(
        passed=counts["pass"], failed=counts["fail"], flaky=counts["flaky"], errors=counts["error"],
        ungraded=counts["ungraded"],
    )  # fmt: skip
