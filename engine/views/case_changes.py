"""Cases that changed on their own evidence between two runs: `engine compare`'s per-case rule.

A paired test over all cases is blind to one case that went from 10/10 to 0/10 among many that did
not move; a CI user expects that case to be a regression by itself. Each shared case's replicas are
compared with Fisher's exact test, Holm-corrected across every case (and variant) tested, so a
suite of many cases does not flag noise. The counts come from both runs' case columns
(compare_columns.py), each distinct table tested once.

Errors get the same rule on their own (a separate Holm family): a scenario that now always errors is
a regression by itself, and named, however many cases the suite has.
"""

from __future__ import annotations

from typing import Any

import msgspec
import numpy as np

from engine.stats.columns import fisher_by_table, holm_array
from engine.store.projections.case_columns import StateColumns
from engine.store.projections.run_state import RunState
from engine.views.compare.columns import ComparedColumns


class CaseChange(msgspec.Struct, kw_only=True):
    variant: str
    case: str
    baseline: str  # passes/replicas, e.g. "10/10"
    candidate: str
    p_value_adjusted: float


def case_changes(
    base: RunState, cand: RunState, pairs: list[tuple[str, str]], alpha: float,
    columns: ComparedColumns | None = None, metric: str = "pass_rate",
) -> tuple[list[CaseChange], list[CaseChange]]:  # fmt: skip
    """(newly failing, newly passing): cases significantly worse / better in the candidate run.
    `columns`: both runs' case columns when the caller has them built. With metric "error_rate":
    (newly erroring, no longer erroring), counting errored trials among finished ones."""
    columns = columns or ComparedColumns(base, cand)
    tables, tested = [], []  # per variant pair: its (passes, runs, passes, runs) rows, their cases
    for b_name, c_name in pairs:
        label = c_name if b_name == c_name else f"{b_name}->{c_name}"
        b_rows, c_rows = columns.rows(b_name, c_name)
        b_passes, b_runs = _counts(columns.base, b_rows, metric)
        c_passes, c_runs = _counts(columns.cand_columns, c_rows, metric)
        both = (b_runs > 0) & (c_runs > 0)
        tables.append(np.stack([b_passes, b_runs, c_passes, c_runs], axis=1)[both])
        tested += [(label, i) for i in np.flatnonzero(both).tolist()]
    if not tested:
        return [], []
    table = np.concatenate(tables)
    adjusted = holm_array(fisher_by_table(table))
    failing, passing = [], []
    for at in np.flatnonzero(adjusted < alpha).tolist():
        (label, case), (bp, bn, cp, cn) = tested[at], table[at].tolist()
        p_adjusted = round(float(adjusted[at]), 6)
        change = CaseChange(variant=label, case=columns.shared[case], baseline=f"{bp}/{bn}",
                            candidate=f"{cp}/{cn}", p_value_adjusted=p_adjusted)  # fmt: skip
        worse = cp * bn > bp * cn if metric == "error_rate" else cp * bn < bp * cn
        (failing if worse else passing).append(change)
    return failing, passing


def _counts(columns: StateColumns, rows: Any, metric: str) -> tuple[Any, Any]:
    """(passes, scored repeats) of each case at `rows`, or (errored, finished) for "error_rate";
    (0, 0) where there is no cell."""
    present = rows >= 0
    at = np.where(present, rows, 0)
    counts = columns.counts
    hits, runs = (counts.bad, counts.finished) if metric == "error_rate" else (counts.passes, counts.scored)
    return np.where(present, hits[at], 0), np.where(present, runs[at], 0)
