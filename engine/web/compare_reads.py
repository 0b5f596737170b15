"""The web comparison of two runs from their kept states, kept per (base, candidate, each run's log
position): its first view costs two snapshot reads and the statistics, not a fold of every trial
of both runs (200,000 events each at 100,000 trials); a repeated view costs a lookup.

The variant figures come from each run's current report (stored when current: report_cache.py),
the verdict changes from the kept cells (the same rule as the matrix: verdicts.verdict_from_counts),
the side-by-side outputs from each cell's first output kept in the state (the first repeat that
completed, in log order) and its blob.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlencode

import msgspec

from engine.events.report import RunReport
from engine.events.spec import ReplicaAggregation
from engine.presentation.diff import word_diff
from engine.presentation.templates import render
from engine.runtime.run_status import run_state
from engine.store.blobs import read_text
from engine.store.contract import EventStore
from engine.store.projections.run_state import RunState
from engine.store.projections.verdicts import case_verdict
from engine.views.compare import compare_states
from engine.views.run_history import earlier_figures
from engine.web.diffs import MAX_DIFFS, DiffItem, _pairs, _renames
from engine.web.html import run_url
from engine.web.report_cache import KeptResults, Reports, run_position

Cell = tuple[str, str]  # (variant, case)
Verdicts = dict[Cell, str]
Changes = dict[str, list[dict[str, str]]]


@dataclass(frozen=True, slots=True)
class KeptOutput:
    """A cell's first output as the kept state has it (what diffs._pairs compares)."""

    output_hash: str


# each entry holds two runs' kept states (~15 MB each at 100,000 trials): a few comparisons only
KEPT = 4
Compared = tuple[dict[str, object], tuple[RunState, RunState]]  # (the comparison's JSON, both states)


class Comparisons:
    """The server's comparisons: the JSON-ready result (callers read it, never change it) and the
    two kept states the page's outputs come from."""

    def __init__(self, log: EventStore, reports: Reports) -> None:
        self.log, self.reports = log, reports
        self.kept = KeptResults(KEPT)
        self.builds = 0  # tests count them

    def get(self, base_id: str, cand_id: str) -> Compared:
        key = (base_id, cand_id, run_position(self.log, base_id), run_position(self.log, cand_id))
        return self.kept.get(key, lambda: self._build(base_id, cand_id))

    def _build(self, base_id: str, cand_id: str) -> Compared:
        self.builds += 1
        base = run_state(self.log, base_id)
        cand = base if cand_id == base_id else run_state(self.log, cand_id)
        current = (self._report(base_id), self._report(cand_id))
        earlier = earlier_figures(self.log, base_id, cand_id)
        compared = compare_states(base, cand, history=earlier, reports=current)
        result: dict[str, object] = json.loads(msgspec.json.encode(compared))
        result.update(verdict_changes(kept_verdicts(base), kept_verdicts(cand)))
        return result, (base, cand)

    def _report(self, run_id: str) -> RunReport:
        return msgspec.json.decode(self.reports.report(run_id), type=RunReport)


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


def first_outputs(state: RunState) -> dict[Cell, KeptOutput]:
    """Each cell's first output, in the spec's variant and case order (as the diffs list them)."""
    cases = [c.id for c in state.spec.cases] if state.spec else sorted({c for _, c in state.cells})
    out = {}
    for variant in state.variants:
        for case in cases:
            cell = state.cells.get((variant, case))
            if cell is not None and cell.first_output:
                out[(variant, case)] = KeptOutput(cell.first_output)
    return out


def kept_diffs_html(log: EventStore, states: tuple[RunState, RunState], changes: Changes, root: str) -> str:
    """The compare page's side-by-side outputs (diffs.diffs_html's section) from the kept states."""
    base_state, cand_state = states
    base, cand = first_outputs(base_state), first_outputs(cand_state)
    rename = _renames(base, cand)  # type: ignore[arg-type]
    items = []
    for variant, case, change in _pairs(base, cand, changes, rename):  # type: ignore[arg-type]
        before, after = base.get((rename.get(variant, variant), case)), cand.get((variant, case))
        texts = [(read_text(log, r.output_hash) or "") if r is not None else "" for r in (before, after)]
        link = run_url(root, cand_state.run_id, "/trial?" + urlencode({"case": case, "variant": variant}))
        items.append(DiffItem(case, variant, change, word_diff(*texts), link))
    runs = {"base_run": base_state.run_id, "cand_run": cand_state.run_id}
    return render("compare_diffs.html", items=items, limit=MAX_DIFFS, **runs)
