"""The output matrix: cases x variants, each cell a verdict and the output itself.

Built from the trials projection (records without output text): outputs are read from the blob store
only for the rows a page shows, or for a text search only for the rows the other filters keep, so
a page of a 50,000-trial run costs about what a page of a small one does.

A cell's verdict is the report's (its replica aggregation); a cell whose trials all errored reads
"error" with the error's class, one whose outputs no grader could score "grading error": neither is
a failure.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.events.spec import ReplicaAggregation
from engine.store.projections.trials import RunTrials, TrialRecord
from engine.store.projections.verdicts import verdict_from_counts

VERDICTS = ("pass", "fail", "flaky", "error", "grading_error", "ungraded", "pending")
LEGEND = {
    "pass": "passed (by the run's replica aggregation)",
    "fail": "failed",
    "flaky": "some repeats passed, some failed",
    "error": "no output: the trial errored (its class shown), not a failure",
    "grading_error": "an output no grader could score (its class shown), not a failure",
    "ungraded": "an output not graded yet",
    "pending": "not finished yet",
}


def has_grading_error(rec: TrialRecord) -> bool:
    """A grader could not judge the trial (an unparseable judge answer, a failed judge call), whether
    or not another grader scored it."""
    return rec.status == "grading_error" or any(g.error for g in rec.grades)


@dataclass(slots=True)
class MatrixCell:
    variant: str
    records: list[TrialRecord] = field(default_factory=list)
    verdict: str = "pending"
    output: str | None = None  # the first finished repeat's output (read for shown rows only)
    # with a text search: the repeats (from 0) whose output, grader reasons or error hold it, and the
    # repeat whose output the cell shows (the first of them)
    matches: list[int] | None = None
    shown: int | None = None

    @property
    def finished(self) -> list[TrialRecord]:
        return [r for r in self.records if r.finished]

    @property
    def passes(self) -> int:
        return sum(r.status == "pass" for r in self.records)

    @property
    def repeats(self) -> int:
        return len(self.finished)

    @property
    def scored(self) -> int:
        return sum(r.status in ("pass", "fail") for r in self.records)

    @property
    def errors(self) -> int:
        return sum(r.status == "error" for r in self.records)

    @property
    def grading_errors(self) -> int:
        """Trials a grader could not judge: unscored ones, and those other graders scored."""
        return sum(has_grading_error(r) for r in self.records)

    @property
    def unscored(self) -> int:
        """Graded trials no grader could score (out of `scored`)."""
        return sum(r.status == "grading_error" for r in self.records)

    @property
    def error_class(self) -> str:
        """The class of the cell's first error (trial or grading), for its label."""
        for r in self.records:
            if r.status == "error":
                return r.error_class or r.error_kind or "error"
            if r.status == "grading_error":
                return next((g.error for g in r.grades if g.error), "unscored")
        return ""

    @property
    def word(self) -> str:
        """The verdict in words, as the cell shows it beside its colour."""
        if self.verdict == "error":
            return f"error: {self.error_class}"
        if self.verdict == "grading_error":
            return f"grading error: {self.error_class}"
        return self.verdict

    def mean(self, value: str) -> float | None:
        """The mean score, latency_ms or cost_usd over the finished repeats that have one."""
        found = [getattr(r, value) for r in self.finished if getattr(r, value) is not None]
        return sum(found) / len(found) if found else None

    @property
    def output_hash(self) -> str:
        first = next((r for r in sorted(self.records, key=lambda r: r.repeat) if r.completed), None)
        return first.output_hash if first else ""


@dataclass(slots=True)
class MatrixRow:
    case: str
    tags: list[str]
    prompt: str = ""
    expected: str = ""
    cells: dict[str, MatrixCell] = field(default_factory=dict)
    repeat: int | None = None  # the matrix of every repeat: this row's repeat (from 0)

    def verdicts(self, variants: list[str]) -> list[str]:
        return [self.cells[v].verdict if v in self.cells else "pending" for v in variants]

    def differs(self) -> bool:
        """Variants gave different outputs for this case (their first outputs, by content hash)."""
        hashes = {c.output_hash for c in self.cells.values() if c.output_hash}
        return len(hashes) > 1


def cell_verdict(cell: MatrixCell, aggregation: ReplicaAggregation, found: str | None = None) -> str:
    """The report's verdict (`found`, else the same rule over the cell's repeats), an output no grader
    could score named as a grading error."""
    if found is None:
        graded = any(r.graded for r in cell.records)
        found = verdict_from_counts(cell.scored, cell.passes, graded, cell.errors > 0, aggregation)
    if found == "ungraded" and cell.grading_errors:
        return "grading_error"
    return found or "pending"


def _expected(trials: RunTrials, case: str) -> str:
    spec = trials.cases.get(case)
    if spec is None:
        return ""
    parts = [str(spec.expected) if spec.expected is not None else "", spec.reference or ""]
    return "\n".join(p for p in parts if p)


Verdicts = dict[tuple[str, str], str]


def build_rows(trials: RunTrials, aggregation: ReplicaAggregation | None = None,
               verdicts: Verdicts | None = None) -> tuple[list[str], list[MatrixRow]]:  # fmt: skip
    """(variants, rows) in the spec's order; `verdicts` (the report's scenarios) win over recomputing."""
    names = {r.variant for r in trials.records.values()}
    variants = sorted(names, key=lambda n: (trials.variant_order.get(n, len(trials.variant_order)), n))
    rows: dict[str, MatrixRow] = {}
    for rec in trials.records.values():
        row = rows.get(rec.case)
        if row is None:
            spec = trials.cases.get(rec.case)
            tags, prompt = (list(spec.tags), spec.prompt) if spec else ([], "")
            row = rows[rec.case] = MatrixRow(rec.case, tags, prompt, _expected(trials, rec.case))
        row.cells.setdefault(rec.variant, MatrixCell(rec.variant)).records.append(rec)
    for row in rows.values():
        for cell in row.cells.values():
            cell.records.sort(key=lambda r: r.repeat)
            found = (verdicts or {}).get((cell.variant, row.case))
            cell.verdict = cell_verdict(cell, aggregation or ReplicaAggregation(), found)
    order = trials.case_order
    return variants, sorted(rows.values(), key=lambda r: (order.get(r.case, len(order)), r.case))
