"""The two runs of a comparison as case columns, built once and read by every per-case test.

The shared cases are the baseline's, in its spec order, that the candidate's spec has too (the order
every per-case path of `engine compare` pairs them in); each variant's rows are looked up once.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from engine.stats.columns import ratio_mean, scaled_differences
from engine.stats.inference import PairedResult, paired_result
from engine.store.projections.case_columns import Ratios, StateColumns, case_ratios
from engine.store.projections.run_state import RunState


class ComparedColumns:
    def __init__(self, base: RunState, cand: RunState) -> None:
        assert base.spec is not None and cand.spec is not None
        self.base, self.cand = StateColumns(base), None if cand is base else StateColumns(cand)
        in_cand = {c.id for c in cand.spec.cases}
        self.shared = [c.id for c in base.spec.cases if c.id in in_cand]
        self._rows = cache(self._rows_of)

    @property
    def cand_columns(self) -> StateColumns:
        return self.cand or self.base

    def _rows_of(self, side: str, variant: str) -> Any:
        return (self.base if side == "base" else self.cand_columns).rows(variant, self.shared)

    def rows(self, b_name: str, c_name: str) -> tuple[Any, Any]:
        """The shared cases' rows of the baseline's variant and the candidate's (-1: no cell)."""
        return self._rows("base", b_name), self._rows("cand", c_name)

    def ratios(self, names: tuple[str, str], metrics: tuple[str, str]) -> tuple[Ratios, Ratios]:
        """Both variants' per-case values over the shared cases that have one in both runs."""
        b_rows, c_rows = self.rows(*names)
        b = case_ratios(self.base, b_rows, metrics[0])
        c = case_ratios(self.cand_columns, c_rows, metrics[1])
        both = b.defined & c.defined
        return Ratios(b.num[both], b.den[both], both[both]), Ratios(c.num[both], c.den[both], both[both])


def paired_figures(b: Ratios, c: Ratios, seed: int) -> tuple[float | None, float | None, PairedResult | None]:
    """(baseline mean, candidate mean, the paired test with its p only) of values paired by case."""
    b_mean, c_mean = ratio_mean(b.num, b.den), ratio_mean(c.num, c.den)
    if b_mean is None or c_mean is None:
        return b_mean, c_mean, None
    exact = scaled_differences(b.num, b.den, c.num, c.den)
    # its p only (the row shows no interval): the bootstrap of 10,000 cases x 2,000 resamples is skipped
    return b_mean, c_mean, paired_result(exact, seed=seed, resamples=1)


def spend_pairs(columns: ComparedColumns, b_name: str, c_name: str) -> tuple[Any, Any, Any, Any]:
    """(baseline spend, its trials, candidate spend, its trials) of the shared cases both ran."""
    b_rows, c_rows = columns.rows(b_name, c_name)
    b_counts, c_counts = columns.base.counts, columns.cand_columns.counts
    b_at, c_at = np.where(b_rows >= 0, b_rows, 0), np.where(c_rows >= 0, c_rows, 0)
    b_ran, c_ran = b_counts.ran[b_at], c_counts.ran[c_at]
    keep = (b_rows >= 0) & (c_rows >= 0) & (b_ran > 0) & (c_ran > 0)
    return b_counts.cost[b_at][keep], b_ran[keep], c_counts.cost[c_at][keep], c_ran[keep]
