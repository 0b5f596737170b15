"""A run state's cells as numpy columns: one pass over the cells, read by every test of a comparison.

`engine compare` (and the web view's comparison) tests each variant's cases several ways: pass rate,
mean score and error rate paired by case, each case's replicas (Fisher), the cost bootstrap, the
verdict changes. Each used to walk the 20,000 cells of a 100,000-trial run in Python (a dict lookup,
eight bit counts and a Fraction per case, per test). Here the cells' masks and sums are read once
into arrays (counts by numpy's popcount), and each test takes the rows of its variant's cases.

Values are the same integers the cells hold: the figures built from them are checked against the
per-cell paths (cases.case_values, verdicts.case_verdict) in tests/test_case_columns.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from operator import attrgetter
from typing import Any

import numpy as np

from engine.store.projections.run_state import SCALE, Cell, RunState

_MASKS = ("graded", "passed", "unscored", "ungradable", "completed", "failed")
_SUMS = ("score_sum", "first_repeat", "first_score", "cost")


@dataclass(frozen=True, slots=True)
class Counts:
    """Per cell (in the state's order): repeats scored, passed among them, finished (graded or
    errored), without a usable result, ran (an output or an error); any graded, any errored; the
    fixed-point score sum, first scored repeat (-1: none) and its score, the cost."""

    scored: Any
    passes: Any
    finished: Any
    bad: Any
    ran: Any
    graded: Any
    failed: Any
    score_sum: Any
    first_repeat: Any
    first_score: Any
    cost: Any


def _counts(cells: list[Cell]) -> Counts:
    try:  # masks of up to 63 repeats and sums inside int64: numpy's integers and popcount
        graded, passed, unscored, ungradable, completed, failed, *sums = (
            np.fromiter(map(attrgetter(name), cells), np.int64, len(cells)) for name in (*_MASKS, *_SUMS)
        )  # a field at a time: faster than a tuple per cell
    except OverflowError:
        return _counts_of_big(cells)
    bits = np.bitwise_count
    scored = graded & ~unscored
    return Counts(
        bits(scored).astype(np.int64), bits(passed & scored).astype(np.int64),
        bits(graded | failed).astype(np.int64), bits(failed | (graded & ungradable)).astype(np.int64),
        bits(completed | failed).astype(np.int64), graded != 0, failed != 0, *sums,
    )  # fmt: skip


def _counts_of_big(cells: list[Cell]) -> Counts:
    """_counts of cells with more than 63 repeats (or sums past int64): Python ints, object arrays."""
    columns: list[list[Any]] = [[] for _ in range(11)]
    for c in cells:
        scored = c.scored()
        row = (
            scored.bit_count(), (c.passed & scored).bit_count(), (c.graded | c.failed).bit_count(),
            (c.failed | (c.graded & c.ungradable)).bit_count(), (c.completed | c.failed).bit_count(),
            bool(c.graded), bool(c.failed), c.score_sum, c.first_repeat, c.first_score, c.cost,
        )  # fmt: skip
        for column, value in zip(columns, row, strict=True):
            column.append(value)
    kinds = [np.int64] * 5 + [bool, bool] + [object] * 4
    return Counts(*(np.array(col, dtype=kind) for col, kind in zip(columns, kinds, strict=True)))


class StateColumns:
    """The state's cells as columns, and their rows by (variant, case)."""

    def __init__(self, state: RunState) -> None:
        self.state = state
        self.keys = list(state.cells)
        self.counts = _counts(list(state.cells.values()))

    @cached_property
    def index(self) -> dict[tuple[str, str], int]:
        return {key: i for i, key in enumerate(self.keys)}

    def rows(self, variant: str, cases: list[str]) -> Any:
        """Each case's row in the columns, -1 where the variant has no cell of it."""
        index = self.index
        return np.fromiter((index.get((variant, case), -1) for case in cases), np.int64, len(cases))


@dataclass(frozen=True, slots=True)
class Ratios:
    """Per case (the cases `rows` picked), the value as numerator / denominator where `defined`."""

    num: Any
    den: Any
    defined: Any


def case_ratios(columns: StateColumns, rows: Any, metric: str) -> Ratios:
    """case_values / case_error_rates of the cases at `rows`, as exact ratios: "pass_rate" (passes over
    scored repeats), "mean" (mean score), "first_attempt" (the first scored repeat's score) or
    "error_rate" (finished trials without a usable result)."""
    present = rows >= 0
    at = np.where(present, rows, 0)
    c = columns.counts
    if metric == "pass_rate":
        num, den, some = c.passes[at], c.scored[at], c.scored[at] > 0
    elif metric == "mean":
        num, den, some = c.score_sum[at], c.scored[at] * SCALE, c.scored[at] > 0
    elif metric == "first_attempt":
        num, den, some = c.first_score[at], np.full(len(at), SCALE, dtype=np.int64), c.first_repeat[at] >= 0
    elif metric == "error_rate":
        num, den, some = c.bad[at], c.finished[at], c.finished[at] > 0
    else:
        raise ValueError(f"no per-case ratio {metric!r}")
    return Ratios(num, den, present & some)
