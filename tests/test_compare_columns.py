"""The web comparison's column paths give what the per-cell paths give: the verdict changes, the
cells whose outputs are shown side by side, the per-case values of the paired tests."""

from __future__ import annotations

import numpy as np
import pytest

from engine.store.projections.case_columns import StateColumns, case_ratios
from engine.store.projections.cases import case_error_rates, case_values
from engine.store.projections.run_state import RunState
from engine.web.compare_reads import KeptOutputs
from engine.web.compare_verdicts import column_verdict_changes
from engine.web.diffs import _pairs, _renames
from tests.gate_runs import simulated_run
from tests.verdict_oracle import kept_verdicts, verdict_changes


def _run(run_id: str, seed: int, repeats: int, variants: list[str]) -> RunState:
    rng = np.random.default_rng(seed)
    chance = {f"c{i:02d}": rng.random() for i in range(30)}

    def trial(variant: str, case: str, repeat: int) -> tuple[float, float, bool | None]:
        if rng.random() < 0.1:
            return 100.0, 0.0, None
        return 100.0, 0.001, bool(rng.random() < chance[case])

    state = simulated_run(run_id, variants, 30, repeats, trial)
    for i, cell in enumerate(state.cells.values()):
        if cell.first_output:
            cell.first_output = f"out{int(rng.integers(0, 2))}{i % 3}"
    return state


@pytest.mark.parametrize(
    ("seed", "repeats", "names"), [(1, 5, ("a", "a")), (2, 70, ("a", "a")), (3, 4, ("a", "b"))]
)
def test_column_paths_are_the_cell_paths(seed: int, repeats: int, names: tuple[str, str]) -> None:
    base, cand = _run("base", seed, repeats, [names[0]]), _run("cand", seed + 10, repeats, [names[1]])
    b_cols, c_cols = StateColumns(base), StateColumns(cand)
    assert column_verdict_changes(b_cols, c_cols) == verdict_changes(kept_verdicts(base), kept_verdicts(cand))
    b_out, c_out = KeptOutputs(base), KeptOutputs(cand)
    rename = _renames(dict(b_out), dict(c_out))  # type: ignore[arg-type]
    assert rename == _renames(b_out.variants(), c_out.variants())  # type: ignore[arg-type]
    changes = verdict_changes(kept_verdicts(base), kept_verdicts(cand))["verdict_changes"]
    everything = _pairs(dict(b_out), dict(c_out), changes, rename)  # type: ignore[arg-type]
    assert _pairs(b_out, c_out.differing(b_out, rename), changes, rename) == everything  # type: ignore[arg-type]
    cases = [c.id for c in base.spec.cases]  # type: ignore[union-attr]
    rows = b_cols.rows(names[0], cases)
    for metric in ("pass_rate", "mean", "first_attempt", "error_rate"):
        got = case_ratios(b_cols, rows, metric)
        columns = zip(cases, got.num.tolist(), got.den.tolist(), got.defined.tolist(), strict=True)
        values = {c: n / d for c, n, d, ok in columns if ok}
        if metric == "error_rate":
            expected = case_error_rates(base, names[0], cases)
        else:
            expected = case_values(base, names[0], cases, metric)
        assert values == {c: float(v) for c, v in expected.items()}
