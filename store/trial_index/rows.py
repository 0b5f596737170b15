"""A run's trials as the matrix and the trials API read them: one small record per row of the kept
index, made from its columns (no output text, no grades; the full record is read for the few trials
a page describes). `RunTrials.finished`, the matrix's cells and filters read these as they read a
`TrialRecord`: the same attribute names, the same status rule."""

from __future__ import annotations

from engine.store.projections.trials import RunTrials
from engine.store.trial_index.codec import COMPLETED, FAILED, GRADED, PASSED, SCORED, SKIPPED
from engine.store.trial_index.read import RunIndex


class Grade:
    """What the matrix reads of a grade: its error class (a row's first only) and its reason."""

    __slots__ = ("error", "reason")

    def __init__(self, error: str, reason: str) -> None:
        self.error, self.reason = error, reason


class IndexRecord:
    __slots__ = ("case", "cost_usd", "error_class", "error_kind", "flags", "grading_error", "latency_ms",
                 "message", "output_hash", "repeat", "row", "score", "ttft_ms", "variant")  # fmt: skip

    def __init__(
        self, row: int, variant: str, case: str, repeat: int, flags: int, score: float, latency: float,
        cost: float, output_hash: str, error_class: str, error_kind: str, grading_error: str, message: str,
    ) -> None:  # fmt: skip
        self.row, self.variant, self.case, self.repeat, self.flags = row, variant, case, repeat, flags
        self.score = score if flags & SCORED else None
        self.latency_ms, self.cost_usd, self.output_hash = latency, cost, output_hash
        self.error_class, self.error_kind, self.grading_error = error_class, error_kind, grading_error
        self.message = message
        self.ttft_ms: float | None = None  # a streamed answer's (Table.record sets it)

    completed = property(lambda self: bool(self.flags & COMPLETED))
    failed = property(lambda self: bool(self.flags & FAILED))
    skipped = property(lambda self: bool(self.flags & SKIPPED))
    graded = property(lambda self: bool(self.flags & GRADED))
    passed = property(lambda self: bool(self.flags & PASSED))

    @property
    def finished(self) -> bool:
        return bool(self.flags & (COMPLETED | FAILED | SKIPPED))

    @property
    def status(self) -> str:
        """TrialRecord.status, from the flags."""
        flags = self.flags
        if flags & COMPLETED:
            if not flags & GRADED:
                return "ungraded"
            if not flags & (SCORED | PASSED):
                return "grading_error"
            return "pass" if flags & PASSED else "fail"
        return "error" if flags & FAILED else "skipped"

    @property
    def grades(self) -> list[Grade]:
        return [Grade(self.grading_error, "")] if self.grading_error else []


def index_trials(index: RunIndex, records: list[IndexRecord]) -> RunTrials:
    """A RunTrials whose records are the index's rows (what build_rows and `finished` read)."""
    cat = index.catalogue
    spec_cases = cat.spec.cases if cat.spec is not None else []
    return RunTrials(
        index.run_id, cat.experiment, cat.source, cat.seed, cat.grading, dict(cat.variant_order),
        {c.id: i for i, c in enumerate(spec_cases)},
        {(r.variant, r.case, r.repeat): r for r in records},  # type: ignore[misc]
        dict(cat.proposed), {c.id: c for c in spec_cases},
    )  # fmt: skip
