"""A run's trial index as one table of numpy columns (every chunk's rows, in log order), so the
matrix and the trials API count, filter and sort a 100,000-trial run in C, and make Python records
only for the rows a page shows."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engine.store.trial_index.codec import (
    COMPLETED,
    FAILED,
    GRADED,
    PASSED,
    SCORED,
    SKIPPED,
)  # fmt: skip
from engine.store.trial_index.read import RunIndex
from engine.store.trial_index.rows import IndexRecord

# status codes, as TrialRecord.status names them
PASS, FAIL, ERROR, SKIP, UNGRADED, GRADING_ERROR = range(6)
STATUS = {"pass": PASS, "fail": FAIL, "error": ERROR, "skipped": SKIP, "ungraded": UNGRADED,
          "grading_error": GRADING_ERROR}  # fmt: skip


@dataclass(slots=True)
class Table:
    index: RunIndex
    variant: np.ndarray  # index into index.variants
    case: np.ndarray  # index into index.cases
    repeat: np.ndarray
    flags: np.ndarray
    status: np.ndarray
    score: np.ndarray
    latency: np.ndarray
    cost: np.ndarray
    hashes: np.ndarray  # bytes (NUL-padded): each row's output hash
    message: dict[int, str]  # rows with an error message or skip reason
    # rows one of whose graders could not judge (an unparseable judge answer...), scored by others or not
    grader_failed: np.ndarray
    ttft: np.ndarray  # NaN where the trial streamed no answer

    def grading_errors(self) -> np.ndarray:
        """Rows with a grading error: no grader could score them, or one grader could not judge."""
        return (self.status == GRADING_ERROR) | self.grader_failed

    def __len__(self) -> int:
        return len(self.flags)

    def finished(self) -> np.ndarray:
        return (self.flags & (COMPLETED | FAILED | SKIPPED)) != 0

    def record(self, row: int) -> IndexRecord:
        cols = self.index.columns[row // self.index.size]
        i = row % self.index.size
        record = IndexRecord(
            row, self.index.variants[int(self.variant[row])], self.index.cases[int(self.case[row])],
            int(self.repeat[row]), int(self.flags[row]), float(self.score[row]), float(self.latency[row]),
            float(self.cost[row]), cols.hash(i), cols.error_class.get(i, ""), cols.error_kind.get(i, ""),
            cols.grading_error.get(i, ""), cols.message.get(i, ""),
        )  # fmt: skip
        ttft = float(self.ttft[row])
        record.ttft_ms = None if math.isnan(ttft) else ttft
        return record


def table_of(index: RunIndex) -> Table:
    cols = index.columns

    def joined(name: str, dtype: str) -> np.ndarray:
        parts = [np.frombuffer(getattr(c, name), dtype=dtype) for c in cols]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)

    flags = joined("flags", "u1")
    size = index.size
    messages = {c * size + i: text for c, col in enumerate(cols) for i, text in col.message.items()}
    parts = [np.frombuffer(c.output_hash, dtype=f"S{c.hash_width}") if c.hash_width
             else np.zeros(len(c.flags), dtype="S1") for c in cols]  # fmt: skip
    hashes = np.concatenate(parts) if parts else np.zeros(0, dtype="S1")
    grader_failed = np.zeros(len(flags), dtype=bool)
    grader_failed[[c * size + i for c, col in enumerate(cols) for i in col.grading_error]] = True
    return Table(
        index, joined("variant", "u2"), joined("case", "u4"), joined("repeat", "u4"), flags, status_of(flags),
        joined("score", "f8"), joined("latency", "f8"), joined("cost", "f8"), hashes, messages, grader_failed,
        joined("ttft", "f8"),
    )  # fmt: skip


def status_of(flags: np.ndarray) -> np.ndarray:
    """TrialRecord.status of every row, as codes."""
    completed, graded = (flags & COMPLETED) != 0, (flags & GRADED) != 0
    judged = (flags & (SCORED | PASSED)) != 0
    done = np.where(judged, np.where((flags & PASSED) != 0, PASS, FAIL), GRADING_ERROR)
    return np.where(
        completed, np.where(graded, done, UNGRADED), np.where((flags & FAILED) != 0, ERROR, SKIP)
    ).astype(np.uint8)


def finished_rows(t: Table, variant_order: dict[str, int], case_order: dict[str, int]) -> np.ndarray:
    """The finished trials' rows in RunTrials.finished order: variant, case (each in the spec's order,
    then by name), repeat."""
    big = len(variant_order) + len(case_order) + 1
    names, cases = t.index.variants, t.index.cases
    vrank = _ranks([(variant_order.get(n, big), n) for n in names])
    crank = _ranks([(case_order.get(c, big), c) for c in cases])
    rows = np.flatnonzero(t.finished())
    return rows[np.lexsort((t.repeat[rows], crank[t.case[rows]], vrank[t.variant[rows]]))]


def _ranks(keys: list[tuple[int, str]]) -> np.ndarray:
    rank = np.zeros(len(keys), dtype=np.int64)
    rank[sorted(range(len(keys)), key=keys.__getitem__)] = np.arange(len(keys))
    return rank
