"""The comparison's verdict changes cell by cell, as the web view first built them: the reference the
column-wise `engine.web.compare_verdicts` is checked against (same rows, same order)."""

from __future__ import annotations

from collections.abc import Mapping

from engine.events.spec import ReplicaAggregation
from engine.store.projections.run_state import RunState
from engine.store.projections.verdicts import case_verdict

Cell = tuple[str, str]  # (variant, case)
Verdicts = dict[Cell, str]
Changes = dict[str, list[dict[str, str]]]


def kept_verdicts(state: RunState) -> Verdicts:
    """Each (variant, case) cell's verdict from the kept cells (cells with nothing known left out)."""
    aggregation = state.spec.scoring.replica_aggregation if state.spec else ReplicaAggregation()
    out: Verdicts = {}
    for key, cell in state.cells.items():
        found = case_verdict(cell, aggregation)
        if found is not None:
            out[key] = found
    return out


def verdict_changes(base: Mapping[Cell, str], cand: Mapping[Cell, str]) -> dict[str, Changes]:
    """Cases whose verdict went from pass to fail/flaky (or back) in the candidate, variant by
    variant (matched by name; two single-variant runs are matched whatever their names)."""
    base_vs, cand_vs = {v for v, _ in base}, {v for v, _ in cand}
    rename = {} if base_vs & cand_vs or len(base_vs) != 1 or len(cand_vs) != 1 else {
        next(iter(cand_vs)): next(iter(base_vs))}  # fmt: skip
    failing, passing = [], []
    for (variant, case), now in sorted(cand.items()):
        before = base.get((rename.get(variant, variant), case))
        row = {"variant": variant, "case": case, "base": before or "", "cand": now}
        if before == "pass" and now in ("fail", "flaky"):
            failing.append(row)
        elif before in ("fail", "flaky") and now == "pass":
            passing.append(row)
    return {"verdict_changes": {"failing": failing, "passing": passing}}
