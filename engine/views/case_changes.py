"""Cases that changed on their own evidence between two runs: `engine compare`'s per-case rule.

A paired test over all cases is blind to one case that went from 10/10 to 0/10 among many that did
not move; a CI user expects that case to be a regression by itself. Each shared case's replicas are
compared with Fisher's exact test, Holm-corrected across every case (and variant) tested, so a
suite of many cases does not flag noise.
"""

from __future__ import annotations

import msgspec

from engine.stats import inference as stats
from engine.stats.gates import fisher_exact
from engine.store.projections.run_state import Cell, RunState


class CaseChange(msgspec.Struct, kw_only=True):
    variant: str
    case: str
    baseline: str  # passes/replicas, e.g. "10/10"
    candidate: str
    p_value_adjusted: float


def _counts(cell: Cell | None) -> tuple[int, int]:
    if cell is None:
        return 0, 0
    scored = cell.scored()
    return (cell.passed & scored).bit_count(), scored.bit_count()


def case_changes(
    base: RunState, cand: RunState, pairs: list[tuple[str, str]], alpha: float
) -> tuple[list[CaseChange], list[CaseChange]]:
    """(newly failing, newly passing): cases significantly worse / better in the candidate run."""
    assert base.spec is not None and cand.spec is not None
    in_cand = {c.id for c in cand.spec.cases}
    shared = [c.id for c in base.spec.cases if c.id in in_cand]
    tested: list[tuple[str, str, tuple[int, int], tuple[int, int], float]] = []
    fisher: dict[tuple[tuple[int, int], tuple[int, int]], float] = {}  # a few distinct tables, many cases
    for b_name, c_name in pairs:
        label = c_name if b_name == c_name else f"{b_name}->{c_name}"
        for case in shared:
            b, c = _counts(base.cells.get((b_name, case))), _counts(cand.cells.get((c_name, case)))
            if b[1] and c[1]:
                p = fisher.get((b, c))
                if p is None:
                    p = fisher[(b, c)] = fisher_exact(b[0], b[1], c[0], c[1])
                tested.append((label, case, b, c, p))
    adjusted = stats.holm([p for *_, p in tested])
    failing, passing = [], []
    for (label, case, b, c, _), adj in zip(tested, adjusted, strict=True):
        if adj is None or adj >= alpha:
            continue
        change = CaseChange(variant=label, case=case, baseline=f"{b[0]}/{b[1]}", candidate=f"{c[0]}/{c[1]}",
                            p_value_adjusted=round(adj, 6))  # fmt: skip
        (failing if c[0] * b[1] < b[0] * c[1] else passing).append(change)
    return failing, passing
