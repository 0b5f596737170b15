"""The comparison's verdict changes from both runs' case columns, without a verdict string per cell
(20,000 of them per run); tests/verdict_oracle.py builds the same rows cell by cell.

Each cell's verdict is verdicts.verdict_from_counts on its counts, for all cells at once: a code per
cell (0: nothing known yet); the changes are then looked up for the candidate's decided cells only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.events.spec import ReplicaAggregation
from engine.store.projections.case_columns import Counts, StateColumns

NAMES = ("", "pass", "fail", "flaky", "error", "ungraded")
PASS, FAIL, FLAKY, ERROR, UNGRADED = 1, 2, 3, 4, 5


def verdict_codes(counts: Counts, aggregation: ReplicaAggregation) -> Any:
    """verdict_from_counts(scored, passes, any graded, any errored) of every cell, as codes."""
    runs, passes = counts.scored, counts.passes
    unscored = np.where(counts.graded, UNGRADED, np.where(counts.failed, ERROR, 0))
    if aggregation.strategy == "any":
        scored = np.where(passes > 0, PASS, FAIL)
    else:
        bar = 1.0 if aggregation.strategy == "all" else aggregation.min_pass_rate
        with np.errstate(divide="ignore", invalid="ignore"):  # rows without runs take `unscored`
            share = passes.astype(float) / runs.astype(float)  # small counts: exact, one rounded division
        scored = np.where(share >= bar, PASS, np.where(passes == 0, FAIL, FLAKY))
    return np.where(runs == 0, unscored, scored)


def _codes(columns: StateColumns) -> Any:
    spec = columns.state.spec
    return verdict_codes(columns.counts, spec.scoring.replica_aggregation if spec else ReplicaAggregation())


def column_verdict_changes(
    base: StateColumns, cand: StateColumns
) -> dict[str, dict[str, list[dict[str, str]]]]:
    """Cases whose verdict went from pass to fail/flaky (or back) in the candidate, variant by
    variant (matched by name; two single-variant runs are matched whatever their names)."""
    b_codes, c_codes = _codes(base), _codes(cand)
    base_vs = {base.keys[i][0] for i in np.flatnonzero(b_codes).tolist()}
    cand_vs = {cand.keys[i][0] for i in np.flatnonzero(c_codes).tolist()}
    rename = {} if base_vs & cand_vs or len(base_vs) != 1 or len(cand_vs) != 1 else {
        next(iter(cand_vs)): next(iter(base_vs))}  # fmt: skip
    before = _aligned(b_codes, base, cand, rename)
    failed = (c_codes == FAIL) | (c_codes == FLAKY)
    worse = np.flatnonzero((before == PASS) & failed).tolist()
    better = np.flatnonzero(((before == FAIL) | (before == FLAKY)) & (c_codes == PASS)).tolist()
    failing, passing = [cand.keys[i] for i in worse], [cand.keys[i] for i in better]
    return {"verdict_changes": {"failing": _rows(failing, base, cand, rename, b_codes, c_codes),
                                "passing": _rows(passing, base, cand, rename, b_codes, c_codes)}}  # fmt: skip


def _aligned(b_codes: Any, base: StateColumns, cand: StateColumns, rename: dict[str, str]) -> Any:
    """The base's code of each candidate cell's case (0: none): the same cells in the same order
    (two runs of one spec) need no lookup."""
    if not rename and base.keys == cand.keys:
        return b_codes
    index = base.index
    at = np.fromiter((index.get((rename.get(v, v), c), -1) for v, c in cand.keys), np.int64, len(cand.keys))
    return np.where(at >= 0, b_codes[np.where(at >= 0, at, 0)], 0)


def _rows(
    keys: list[tuple[str, str]], base: StateColumns, cand: StateColumns, rename: dict[str, str], b_codes: Any,
    c_codes: Any,
) -> list[dict[str, str]]:  # fmt: skip
    out = []
    for variant, case in sorted(keys):  # as verdict_changes lists them: by (variant, case)
        before = b_codes[base.index[(rename.get(variant, variant), case)]]
        now = c_codes[cand.index[(variant, case)]]
        out.append({"variant": variant, "case": case, "base": NAMES[before], "cand": NAMES[now]})
    return out
