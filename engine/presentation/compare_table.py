"""`engine compare`'s tables, the same on the terminal and the web's compare page: each metric's
delta with both its raw and its Holm-adjusted p (or, for latency and cost, the ratio's interval),
and the cases newly failing or passing with their Holm-adjusted p. Plain text; each surface escapes it."""

from __future__ import annotations

from typing import Any

import msgspec

from engine.presentation.report.numbers import P_HOLM, P_RAW, money, p_value
from engine.views.case_changes import CaseChange
from engine.views.compare.gates import MetricDelta

METRIC_HEADER = [
    "variant", "metric", "baseline", "candidate", "delta", f"{P_RAW} / ratio CI", P_HOLM, "direction",
    "regressed",
]  # fmt: skip
CASE_HEADER = ["variant", "case", "baseline", "candidate", P_HOLM]
CASE_TEST = "Fisher's exact test on replicas"


def _typed(items: list[Any], kind: type[Any]) -> list[Any]:
    """The structs, from themselves or their dicts (the web keeps a comparison as JSON)."""
    return [msgspec.convert(i, kind) if isinstance(i, dict) else i for i in items]


def metric_rows(metrics: list[Any]) -> list[list[str]]:
    return [
        [
            m.variant, m.metric, *[figure(m.metric, v) for v in (m.baseline, m.candidate, m.delta)],
            _raw(m), "-" if m.ratio_ci is not None else p_value(m.p_value_adjusted), m.note or m.direction,
            "yes" if m.regressed else "no",
        ]
        for m in _typed(metrics, MetricDelta)
    ]  # fmt: skip


def metric_tables(metrics: list[Any]) -> list[tuple[str, list[str], list[list[str]]]]:
    """(variant pair, header, rows): a table per compared pair, the pair said above it, so each table
    keeps one line per metric at 100 columns."""
    by_pair: dict[str, list[list[str]]] = {}
    for row in metric_rows(metrics):
        by_pair.setdefault(row[0], []).append(row[1:])
    return [(pair, METRIC_HEADER[1:], rows) for pair, rows in by_pair.items()]


def case_rows(changes: list[Any]) -> list[list[str]]:
    """Cases newly failing or passing, each with its passes/replicas in both runs."""
    return [
        [c.variant, c.case, c.baseline, c.candidate, p_value(c.p_value_adjusted)]
        for c in _typed(changes, CaseChange)
    ]


def _raw(m: MetricDelta) -> str:
    """The raw p of a paired metric, or the interval of a ratio metric (latency, cost)."""
    if m.ratio_ci is not None:
        return f"x{m.ratio_ci[0]:.3g}-{m.ratio_ci[1]:.3g}"
    return p_value(m.p_value)


def figure(metric: str, value: float | None) -> str:
    """Money in fixed decimals (never 3.72e-05), other figures to 4 significant digits."""
    if "cost" in metric:
        return money(value)
    return "-" if value is None else f"{value:.4g}"
