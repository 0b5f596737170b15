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
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from urllib.parse import urlencode

import msgspec

from engine.presentation.diff import word_diff
from engine.presentation.templates import render
from engine.runtime.run_status import run_state
from engine.store.blobs import read_text
from engine.store.contract import EventStore
from engine.store.projections.run_state import RunState
from engine.views.compare.columns import ComparedColumns
from engine.views.compare.comparison import compare_states
from engine.views.compare.metrics import ReportFigures
from engine.views.run_history import earlier_figures
from engine.web.compare_verdicts import column_verdict_changes
from engine.web.diffs import MAX_DIFFS, DiffItem, _pairs, _renames
from engine.web.html import run_url
from engine.web.report_cache import KeptResults, Reports, run_position

Cell = tuple[str, str]  # (variant, case)
Changes = dict[str, list[dict[str, str]]]


@dataclass(frozen=True, slots=True)
class KeptOutput:
    """A cell's first output as the kept state has it (what diffs._pairs compares)."""

    output_hash: str


# each entry holds two runs' kept states (large for big runs: benchmarks/README.md#in-code-memory): a few
# comparisons only
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
        columns = ComparedColumns(base, cand)  # each run's cells read once: the tests and the verdicts
        compared = compare_states(base, cand, history=earlier, reports=current, columns=columns)
        result: dict[str, object] = json.loads(msgspec.json.encode(compared))
        result.update(column_verdict_changes(columns.base, columns.cand_columns))
        return result, (base, cand)

    def _report(self, run_id: str) -> ReportFigures:
        return msgspec.json.decode(self.reports.report(run_id), type=ReportFigures)


class KeptOutputs(Mapping[Cell, KeptOutput]):
    """Each cell's first output in the spec's variant and case order (as the diffs list them), read
    from the cells when asked: the page shows a few dozen of a 100,000-trial run's 20,000."""

    def __init__(self, state: RunState) -> None:
        self.state = state
        self.cases = [c.id for c in state.spec.cases] if state.spec else sorted({c for _, c in state.cells})
        self.known = set(self.cases)

    def __getitem__(self, key: Cell) -> KeptOutput:
        cell = self.state.cells.get(key) if key[1] in self.known and key[0] in self.state.variants else None
        if cell is None or not cell.first_output:
            raise KeyError(key)
        return KeptOutput(cell.first_output)

    def __iter__(self) -> Iterator[Cell]:
        return ((variant, case) for variant in self.state.variants for case in self._of(variant))

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def _of(self, variant: str) -> Iterator[str]:
        cells = self.state.cells
        return (c for c in self.cases if (cell := cells.get((variant, c))) is not None and cell.first_output)

    def variants(self) -> list[tuple[str, str]]:
        """(variant, "") of each variant with an output: what diffs._renames reads of the keys."""
        return [(v, "") for v in self.state.variants if next(self._of(v), None) is not None]

    def differing(self, base: KeptOutputs, rename: Mapping[str, str]) -> dict[Cell, KeptOutput]:
        """The cells of these outputs whose first output differs from the base's of the same case,
        in order: the only ones diffs._pairs takes besides the verdict changes (it skips the rest)."""
        b_cells, known = base.state.cells, base.known
        out = {}
        for variant in self.state.variants:
            b_variant = rename.get(variant, variant)
            if b_variant not in base.state.variants:
                continue
            for case in self._of(variant):
                before = b_cells.get((b_variant, case)) if case in known else None
                after = self.state.cells[(variant, case)].first_output
                if before is not None and before.first_output and before.first_output != after:
                    out[(variant, case)] = KeptOutput(after)
        return out


def kept_diffs_html(log: EventStore, states: tuple[RunState, RunState], changes: Changes, root: str) -> str:
    """The compare page's side-by-side outputs (diffs.diffs_html's section) from the kept states."""
    base_state, cand_state = states
    base, cand = KeptOutputs(base_state), KeptOutputs(cand_state)
    rename = _renames(base.variants(), cand.variants())  # type: ignore[arg-type]
    items = []
    for variant, case, change in _pairs(base, cand.differing(base, rename), changes, rename):  # type: ignore[arg-type]
        before, after = base.get((rename.get(variant, variant), case)), cand.get((variant, case))
        texts = [(read_text(log, r.output_hash) or "") if r is not None else "" for r in (before, after)]
        link = run_url(root, cand_state.run_id, "/trial?" + urlencode({"case": case, "variant": variant}))
        items.append(DiffItem(case, variant, change, word_diff(*texts), link))
    runs = {"base_run": base_state.run_id, "cand_run": cand_state.run_id}
    return render("compare_diffs.html", items=items, limit=MAX_DIFFS, **runs)
