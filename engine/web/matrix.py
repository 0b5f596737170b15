"""The matrix: cases x variants, each cell passes/repeats and a verdict, with the page's filters."""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.events.spec import ReplicaAggregation
from engine.store.projections.verdicts import verdict_from_counts
from engine.web.data import RunView
from engine.web.trials_api import case_tags


@dataclass(slots=True)
class Cell:
    passes: int = 0
    scored: int = 0
    errors: int = 0
    repeats: int = 0
    aggregation: ReplicaAggregation = field(default_factory=ReplicaAggregation)

    @property
    def verdict(self) -> str:
        """pass | fail | flaky | error | pending, as the report decides it (the run's replica_aggregation)."""
        found = verdict_from_counts(self.scored, self.passes, False, bool(self.errors), self.aggregation)
        return found or "pending"


@dataclass(slots=True)
class Row:
    case: str
    tags: list[str]
    cells: dict[str, Cell] = field(default_factory=dict)


def build_rows(view: RunView) -> tuple[list[str], list[Row]]:
    names = {r.variant for r in view.trials.records.values()}
    variants = sorted(names, key=_order(view.trials.variant_order))
    tags = case_tags(view)
    aggregation = view.spec.scoring.replica_aggregation if view.spec else ReplicaAggregation()
    rows: dict[str, Row] = {}
    for rec in view.trials.records.values():
        row = rows.get(rec.case) or rows.setdefault(rec.case, Row(rec.case, tags.get(rec.case, [])))
        cell = row.cells.get(rec.variant) or row.cells.setdefault(rec.variant, Cell(aggregation=aggregation))
        cell.repeats += rec.finished
        cell.errors += rec.status == "error"
        cell.scored += rec.status in ("pass", "fail")
        cell.passes += rec.status == "pass"
    ordered = sorted(rows.values(), key=lambda r: (view.trials.case_order.get(r.case, len(rows)), r.case))
    return variants, ordered


def _order(order: dict[str, int]):  # noqa: ANN202 - a sort key
    return lambda name: (order.get(name, len(order)), name)


def keep(row: Row, variants: list[str], show: str, tag: str, q: str) -> bool:
    """show: all | failing | flaky | regressed (a variant fails a case the baseline passes)."""
    verdicts = [row.cells[v].verdict if v in row.cells else "pending" for v in variants]
    if tag and tag not in row.tags:
        return False
    if q and q.lower() not in row.case.lower():
        return False
    if show == "failing":  # any repeat that failed or errored
        return any(v in ("fail", "flaky", "error") for v in verdicts)
    if show == "flaky":
        return "flaky" in verdicts
    if show == "regressed":
        return bool(verdicts) and verdicts[0] == "pass" and any(v in ("fail", "flaky") for v in verdicts[1:])
    return True


def matrix(view: RunView, show: str = "all", tag: str = "", q: str = "", limit: int = 100,
           offset: int = 0) -> dict[str, object]:  # fmt: skip
    variants, rows = build_rows(view)
    kept = [r for r in rows if keep(r, variants, show, tag, q)]
    page = kept[offset : offset + limit]
    return {
        "run_id": view.trials.run_id,
        "variants": variants,
        "total": len(kept),
        "offset": offset,
        "limit": limit,
        "rows": [
            {"case": r.case, "tags": r.tags,
             "cells": {v: {"passes": c.passes, "scored": c.scored, "errors": c.errors, "repeats": c.repeats,
                           "verdict": c.verdict} for v, c in r.cells.items()}}
            for r in page
        ],
    }  # fmt: skip
