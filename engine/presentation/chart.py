"""The score chart's geometry (horizontal bars of the strategy score with 95% CI whiskers, the
baseline's score dashed): numbers only; templates/score_chart.html draws it."""

from __future__ import annotations

from dataclasses import dataclass

from engine.events.report import RunReport
from engine.presentation.report.numbers import interval
from engine.presentation.report.tables import role

MARKS = {"winner": "\u2605 ", "tied": "= "}  # a star only for a significant winner
ROW_H, LABEL_W, VALUE_W, PLOT_W, TOP, AXIS_H = 30, 190, 170, 460, 8, 28


@dataclass(frozen=True, slots=True)
class Bar:
    name: str
    label: str  # the name, cut short; a star before a significant winner's, "=" before a tied best
    role: str
    y: float
    mid: float
    left: float | None  # None: no score
    width: float
    score_text: str
    whisker: tuple[float, float] | None


@dataclass(frozen=True, slots=True)
class Chart:
    width: int
    height: int
    bottom: float
    ticks: list[tuple[float, str]]
    bars: list[Bar]
    baseline_x: float | None
    axis: tuple[float, float]
    label_x: int = LABEL_W - 8
    value_x: int = LABEL_W + PLOT_W + 8
    row_h: int = ROW_H


def score_chart(r: RunReport) -> Chart | None:
    if not r.variants:
        return None
    scores = [v.strategy_score for v in r.variants if v.strategy_score is not None]
    lo, hi = min([0.0, *scores]), max([1.0, *scores])  # wider than [0, 1] only for a score outside it

    def x(value: float) -> float:
        return round(LABEL_W + (min(max(value, lo), hi) - lo) / (hi - lo) * PLOT_W, 2)

    whiskers = r.strategy != "pass_at_k"  # pass@k has no CI in the report
    bars = []
    for i, v in enumerate(r.variants):
        y, kind, score = TOP + i * ROW_H, role(r, v.name), v.strategy_score
        short = v.name if len(v.name) <= 26 else v.name[:25] + "\u2026"
        label = MARKS.get(kind, "") * (kind != "winner" or r.winner_significant) + short
        ci = v.ci95 if whiskers and score is not None else None
        left, right = sorted((x(0.0), x(score))) if score is not None else (None, 0.0)
        bars.append(Bar(
            v.name, label, kind, y, y + ROW_H / 2, left, round(right - (left or 0.0), 2),
            "no score" if score is None else f"{score:.3f}" + (f" {interval(ci, 2)}" if ci else ""),
            (x(ci[0]), x(ci[1])) if ci else None,
        ))  # fmt: skip
    bottom = TOP + ROW_H * len(r.variants)
    base = next((v for v in r.variants if v.name == r.baseline and v.strategy_score is not None), None)
    return Chart(
        width=LABEL_W + PLOT_W + VALUE_W, height=bottom + AXIS_H, bottom=bottom,
        ticks=[(x(lo + (hi - lo) * i / 4), f"{lo + (hi - lo) * i / 4:.2f}") for i in range(5)], bars=bars,
        baseline_x=x(base.strategy_score) if base and base.strategy_score is not None else None,
        axis=(x(lo), x(hi)),
    )  # fmt: skip
