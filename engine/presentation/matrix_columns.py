"""The matrix over a run's kept trial index: `build_rows` + `select` (matrix.py, matrix_query.py)
computed on numpy columns, with the same answer: cells' counts and verdicts, the filters, the text
search, the sort (sums taken in the same order, so the same floats) and the page. Only the page's
rows are made as MatrixRows, with records of their own: a page of a 100,000-trial run makes 50 rows,
not 100,000 records."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from engine.events.spec import ReplicaAggregation
from engine.presentation.matrix import MatrixCell, MatrixRow, _expected
from engine.presentation.matrix_query import MatrixQuery, ReadOutput, matcher
from engine.store.projections.trials import RunTrials
from engine.store.trial_index.codec import COMPLETED, FAILED, GRADED, SCORED, SKIPPED
from engine.store.trial_index.table import ERROR, FAIL, PASS, Table

NAMES = ("pass", "fail", "flaky", "error", "grading_error", "ungraded", "pending")
V_PASS, V_FAIL, V_FLAKY, V_ERROR, V_GRADING_ERROR, V_UNGRADED, V_PENDING = range(7)
VALUES = {"score": "score", "latency": "latency", "cost": "cost", "ttft": "ttft"}  # the sorts' values


def ordered(names: list[str], order: dict[str, int], present: np.ndarray) -> tuple[list[int], np.ndarray]:
    """The present names' indexes in display order (order, then name), and each index's rank."""
    found = sorted((int(i) for i in present), key=lambda i: (order.get(names[i], len(order)), names[i]))
    rank = np.full(len(names), -1, dtype=np.int64)
    rank[found] = np.arange(len(found))
    return found, rank


def verdicts(passes: np.ndarray, scored: np.ndarray, errors: np.ndarray, gerrs: np.ndarray,
             graded: np.ndarray, aggregation: ReplicaAggregation) -> np.ndarray:  # fmt: skip
    """verdict_from_counts and cell_verdict, cell by cell, as codes into NAMES."""
    out = np.full(len(passes), V_PENDING, dtype=np.int8)
    none = scored == 0
    out[none & ~graded & (errors > 0)] = V_ERROR
    out[none & graded] = np.where(gerrs[none & graded] > 0, V_GRADING_ERROR, V_UNGRADED)
    some = ~none
    if aggregation.strategy == "any":
        out[some] = np.where(passes[some] > 0, V_PASS, V_FAIL)
    else:
        bar = 1.0 if aggregation.strategy == "all" else aggregation.min_pass_rate
        rate = passes[some] / scored[some]
        out[some] = np.where(rate >= bar, V_PASS, np.where(passes[some] == 0, V_FAIL, V_FLAKY))
    return out


class Grid:
    """The run's rows (cases) x variants, with every cell's counts and verdict."""

    def __init__(self, t: Table, trials: RunTrials, aggregation: ReplicaAggregation) -> None:
        self.t, self.trials = t, trials
        ix = t.index
        self.variant_ids, vrank = ordered(ix.variants, trials.variant_order, np.unique(t.variant))
        self.case_ids, crank = ordered(ix.cases, trials.case_order, np.unique(t.case))
        self.R, self.V = len(self.case_ids), len(self.variant_ids)
        self.row_of = crank[t.case]
        self.cell = self.row_of * self.V + vrank[t.variant]
        self.order = np.lexsort((t.repeat, self.cell))  # records by cell, then repeat
        n = self.R * self.V

        def count(mask: np.ndarray) -> np.ndarray:
            return np.bincount(self.cell, weights=mask, minlength=n).astype(np.int64)

        self.present = np.bincount(self.cell, minlength=n) > 0
        s = t.status
        self.passes, self.errors, self.gerrs = count(s == PASS), count(s == ERROR), count(t.grading_errors())
        self.scored = count((s == PASS) | (s == FAIL))
        graded = count((t.flags & GRADED) != 0) > 0
        v = verdicts(self.passes, self.scored, self.errors, self.gerrs, graded, aggregation)
        self.verdict = np.where(self.present, v, V_PENDING).reshape(self.R, self.V)
        first = np.full(n, len(t), dtype=np.int64)
        np.minimum.at(first, self.cell, np.arange(len(t)))
        self.first_row = first  # each cell's first record in the log: the order of a row's cells

    def differs(self) -> np.ndarray:
        """Rows whose cells' first outputs (by repeat, completed ones) have more than one hash."""
        done = self.order[(self.t.flags[self.order] & COMPLETED) != 0]
        cells, at = np.unique(self.cell[done], return_index=True)
        firsts = self.t.hashes[done[at]]
        keep = firsts != b""
        hashes = np.unique(firsts, return_inverse=True)[1].reshape(-1)
        pairs = np.unique(np.stack([cells[keep] // self.V, hashes[keep]]), axis=1)
        return np.bincount(pairs[0], minlength=self.R) > 1 if pairs.size else np.zeros(self.R, dtype=bool)

    def means(self, value: str) -> np.ndarray:
        """Each row's mean of its cells' means (nan: none), summed in the order the matrix sums them."""
        t, order = self.t, self.order
        finished = (t.flags & (COMPLETED | FAILED | SKIPPED)) != 0
        column = getattr(t, VALUES[value])
        if value == "score":
            has = finished & ((t.flags & SCORED) != 0)
        else:  # a figure a trial may not have (NaN: no streamed answer) counts only where it has one
            has = finished & ~np.isnan(column)
        use = order[has[order]]
        n = self.R * self.V
        total = np.bincount(self.cell[use], weights=column[use], minlength=n)
        counted = np.bincount(self.cell[use], minlength=n)
        cells = np.flatnonzero(counted)
        cells = cells[np.lexsort((self.first_row[cells], cells // self.V))]
        cell_mean = total[cells] / counted[cells]
        rows = cells // self.V
        row_total = np.bincount(rows, weights=cell_mean, minlength=self.R)
        row_count = np.bincount(rows, minlength=self.R)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(row_count > 0, row_total / np.maximum(row_count, 1), np.nan)

    def row(self, r: int, read: ReadOutput) -> MatrixRow:
        """Row r as build_rows and select make it: its cells in the order their trials first appeared."""
        case = self.t.index.cases[self.case_ids[r]]
        spec = self.trials.cases.get(case)
        tags, prompt = (list(spec.tags), spec.prompt) if spec else ([], "")
        out = MatrixRow(case, tags, prompt, _expected(self.trials, case))
        lo, hi = np.searchsorted(self.cell[self.order], [r * self.V, (r + 1) * self.V])
        records = [self.t.record(int(i)) for i in self.order[lo:hi]]
        for rec in sorted(records, key=lambda rec: (int(self.first_row[self.cell[rec.row]]), rec.repeat)):
            cell = out.cells.setdefault(rec.variant, MatrixCell(rec.variant))
            cell.records.append(rec)  # type: ignore[arg-type]
        for cell in out.cells.values():
            cell.verdict = NAMES[
                self.verdict[r, self.variant_ids.index(self.t.index.variants.index(cell.variant))]
            ]
            first = next((rec for rec in cell.records if rec.completed), None)
            cell.output = read(first) if first is not None else None
        return out


Searched = Callable[[int], bool]


def select_columns(
    t: Table,
    trials: RunTrials,
    aggregation: ReplicaAggregation,
    query: MatrixQuery,
    read: ReadOutput,
    searched_rows: set[int] | None,
) -> tuple[list[str], int, list[MatrixRow]]:
    """(variants, rows kept, the page's rows with their cells' outputs read)."""
    g = Grid(t, trials, aggregation)
    variants = [t.index.variants[i] for i in g.variant_ids]
    keep = np.ones(g.R, dtype=bool)
    cases = [t.index.cases[i] for i in g.case_ids]
    if query.tag:
        keep &= np.array(
            [query.tag in (s.tags if (s := trials.cases.get(c)) else ()) for c in cases], dtype=bool
        )
    keep &= _shown(g, query.show)
    if query.q:
        keep &= _searched(g, t, trials, cases, query, searched_rows or set())
    rows = np.flatnonzero(keep)
    if query.sort != "case":
        mean = g.means(query.sort.lstrip("-"))[rows]
        sign = -1.0 if query.sort.startswith("-") else 1.0
        rows = rows[np.argsort(np.where(np.isnan(mean), np.inf, sign * mean), kind="stable")]
    page = rows[query.offset : query.offset + query.per_page]
    return variants, len(rows), [g.row(int(r), read) for r in page]


def _shown(g: Grid, show: str) -> np.ndarray:
    v = g.verdict
    failing = (v == V_FAIL) | (v == V_FLAKY)
    if show == "failing":
        return failing.any(axis=1)
    if show == "errors":
        return (g.errors.reshape(g.R, g.V) > 0).any(axis=1)
    if show == "grading_errors":
        return (g.gerrs.reshape(g.R, g.V) > 0).any(axis=1)
    if show == "differs":
        return g.differs()
    if show == "flaky":
        return (v == V_FLAKY).any(axis=1)
    if show == "regressed":
        if g.V == 0:
            return np.zeros(g.R, dtype=bool)
        return (v[:, 0] == V_PASS) & failing[:, 1:].any(axis=1)
    return np.ones(g.R, dtype=bool)


def _searched(g: Grid, t: Table, trials: RunTrials, cases: list[str], query: MatrixQuery,
              searched_rows: set[int]) -> np.ndarray:  # fmt: skip
    """text_hit of every row: its case, prompt, expected; its trials' errors; their reasons and outputs
    (found ahead)."""
    hit = matcher(query)
    specs = [trials.cases.get(case) for case in cases]
    texts = [
        (case, s.prompt if s else "", _expected(trials, case)) for case, s in zip(cases, specs, strict=True)
    ]
    if query.regex or "\0" in query.q:
        found = np.array([any(map(hit, three)) for three in texts], dtype=bool)
    else:  # each text lowered on its own, joined by a NUL the needle does not hold
        needle = query.q.lower()
        found = np.array(
            [needle in "\0".join([a.lower(), b.lower(), c.lower()]) for a, b, c in texts], dtype=bool
        )
    rows = [i for i, m in t.message.items() if hit(m)] + list(searched_rows)
    found[g.row_of[np.array(rows, dtype=np.int64)]] = True
    return found
