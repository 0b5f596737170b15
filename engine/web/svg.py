"""Charts as SVG rendered on the server: no JS library to ship or to trust, and a page reads the
same offline, in a screenshot, or with scripts off. Every label is escaped."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.web.html import e

WIDTH, LABEL_W, ROW_H, PAD = 760, 220, 26, 24


@dataclass(frozen=True, slots=True)
class Interval:
    label: str
    value: float
    low: float
    high: float
    significant: bool


def forest(rows: Sequence[Interval], empty: str = "No comparisons.") -> str:
    """Each comparison's delta with its 95% interval around a zero line; `empty` says why there is none."""
    if not rows:
        return f'<p class="note">{e(empty)}</p>'
    span = max(max(abs(r.low), abs(r.high), abs(r.value)) for r in rows) or 1.0
    plot_w = WIDTH - LABEL_W - PAD

    def x(v: float) -> float:
        return round(LABEL_W + (v + span) / (2 * span) * plot_w, 1)

    height = len(rows) * ROW_H + PAD + 10
    parts = [f'<line x1="{x(0)}" y1="4" x2="{x(0)}" y2="{height - PAD}" class="zero"/>']
    for i, r in enumerate(rows):
        y = 14 + i * ROW_H
        cls = "sig" if r.significant else "ns"
        parts.append(
            f'<text x="4" y="{y + 4}">{e(r.label)}</text>'
            f'<line x1="{x(r.low)}" y1="{y}" x2="{x(r.high)}" y2="{y}" class="ci {cls}"/>'
            f'<circle cx="{x(r.value)}" cy="{y}" r="5" class="{cls}"><title>{e(r.label)}: '
            f"{r.value:+.3f} [{r.low:+.3f}, {r.high:+.3f}]</title></circle>"
        )
    axis_y = height - PAD + 14
    for v in (-span, 0.0, span):
        parts.append(f'<text x="{x(v)}" y="{axis_y}" text-anchor="middle">{v:+.2f}</text>')
    return _svg(height, "".join(parts), "forest plot of deltas against the baseline")


@dataclass(frozen=True, slots=True)
class Point:
    label: str
    value: float
    mark: str = ""  # a CSS class: accepted | rejected | ...


def series(points: Sequence[Point], title: str, line: bool = False, x_label: str = "") -> str:
    """Values in order (variations, runs) with a mark per point; joined by a line for a history. With
    `x_label`, the x axis is named and its points numbered from 1 (a few numbers on a long series)."""
    if not points:
        return '<p class="note">Nothing to plot yet.</p>'
    lo, hi = min(0.0, *(p.value for p in points)), max(1.0, *(p.value for p in points))
    height, left = 240 + (24 if x_label else 0), 48
    step = (WIDTH - left - PAD) / max(len(points) - 1, 1)

    bottom = PAD + (24 if x_label else 0)  # room for the x axis's numbers and its name

    def xy(i: int, v: float) -> tuple[float, float]:
        return round(left + i * step, 1), round(
            height - bottom - (v - lo) / (hi - lo) * (height - PAD - bottom), 1
        )

    coords = [xy(i, p.value) for i, p in enumerate(points)]
    parts = [f'<text x="4" y="{xy(0, v)[1] + 4}">{v:.2f}</text>' for v in (lo, (lo + hi) / 2, hi)]
    if x_label:
        every = max(1, -(-len(points) // 12))  # at most about 12 numbers
        parts += [f'<text x="{coords[i][0]}" y="{height - 22}" text-anchor="middle">{i + 1}</text>'
                  for i in range(0, len(points), every)]  # fmt: skip
        parts.append(f'<text x="{(left + WIDTH - PAD) / 2}" y="{height - 4}" text-anchor="middle" '
                     f'class="axis-name">{e(x_label)}</text>')  # fmt: skip
    if line:
        path = " ".join(f"{x},{y}" for x, y in coords)
        parts.append(f'<polyline points="{path}" class="trend"/>')
    for (x, y), p in zip(coords, points, strict=True):
        parts.append(
            f'<circle cx="{x}" cy="{y}" r="5" class="{e(p.mark)}">'
            f"<title>{e(p.label)}: {p.value:.3f}</title></circle>"
        )
    return _svg(height, "".join(parts), title)


def _svg(height: int, inner: str, title: str) -> str:
    # scales with its viewBox; on a phone its box scrolls so the text stays readable (style.css)
    return (
        f'<div class="chart-box"><svg class="chart" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" '
        f'height="{height}" role="img" aria-label="{e(title)}">{inner}</svg></div>'
    )
