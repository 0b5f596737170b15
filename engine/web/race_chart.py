"""The race chart: each variant's objective (mean and 95% interval) round by round, a cross where a
variant was dropped, and the table of eliminations with their evidence."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine.web.html import e, num, table
from engine.web.svg import PAD, WIDTH, _svg

Scale = Callable[[float], float]
LEFT, RIGHT = 48, 150  # room for the axis figures and for the variants' names at the right


def race_section(stopping: dict[str, Any]) -> str:
    rounds = stopping.get("rounds") or []
    if not rounds:
        return '<p class="note">No round decided yet.</p>'
    why = {
        "one_left": "one variant left",
        "equivalent": "the rest within min_improvement",
        "max": "cases ran out",
    }
    saved = stopping["trials_saved"]
    head = (
        f"<p>Round {stopping['looks_done']} of {stopping['max_looks']} on {e(stopping['objective'])}"
        f" ({e(why.get(stopping['stopped'], 'racing'))}); {saved:,} of {stopping['fixed_design_trials']:,} "
        f"trials saved. A variant dropped early ran fewer cases: its interval is wider.</p>"
    )
    chart = race_chart(rounds, stopping.get("eliminations") or [], stopping.get("objective", ""))
    return head + chart + eliminations_table(stopping)


COLOURS = 10  # one colour per variant: style.css's v0..v9 (Tableau 10), reused past ten
BOUNDED = ("score", "pass_rate")  # objectives in [0, 1]: the axis never leaves it
LABEL_GAP = 14  # px between two names at the right edge


def race_chart(rounds: list[dict[str, Any]], eliminations: list[dict[str, Any]], objective: str = "") -> str:
    # a cost per pass with no pass is infinite (logged as the largest float): no point to draw
    points = [(r["round"], s) for r in rounds for s in r["standings"] if abs(s["mean"]) < 1e300]
    if not points:
        return ""
    lo, hi = _range(points, objective)
    span = (hi - lo) or 1.0
    height, last = 280, max(r["round"] for r in rounds)
    step = (WIDTH - LEFT - RIGHT) / max(last - 1, 1)

    def x(round_no: int) -> float:
        return round(LEFT + (round_no - 1) * step, 1)

    def y(value: float) -> float:
        inside = min(max(value, lo), hi)  # an interval past the axis's end stops at it
        return round(height - PAD - 16 - (inside - lo) / span * (height - 2 * PAD - 16), 1)

    dropped = {d["variant"]: d["round"] for d in eliminations}
    # round first: -0.001 would read "-0.00"
    parts = [f'<text x="4" y="{y(v) + 4}">{round(v, 2) + 0.0:.2f}</text>' for v in (lo, (lo + hi) / 2, hi)]
    parts += [
        f'<text x="{x(r)}" y="{height - 20}" text-anchor="middle">{r}</text>' for r in range(1, last + 1)
    ]
    parts.append(f'<text x="{(LEFT + WIDTH - RIGHT) / 2}" y="{height - 4}" text-anchor="middle">round</text>')
    variants = list(dict.fromkeys(s["variant"] for _, s in points))
    colour = {v: f"v{i % COLOURS}" for i, v in enumerate(variants)}  # classes: the CSP allows no inline style
    ends = []
    for variant in variants:
        mine = [(r, s) for r, s in points if s["variant"] == variant]
        parts += _variant_marks(variant, mine, variant in dropped, x, y, colour[variant])
        end_r, end = mine[-1]
        ends.append((y(end["mean"]), x(end_r), variant))
    parts += _names(ends, colour, height)
    chart = _svg(height, "".join(parts), "race: each variant's objective by round, drops marked")
    return chart + _legend(variants, colour, dropped)


def _range(points: list[tuple[int, dict[str, Any]]], objective: str) -> tuple[float, float]:
    values = [v for _, s in points for v in (s["mean"], s.get("lo"), s.get("hi")) if v is not None]
    lo, hi = min(values), max(values)
    if objective in BOUNDED:
        lo, hi = max(lo, 0.0), min(hi, 1.0)
    return lo, hi


def _names(ends: list[tuple[float, float, str]], colour: dict[str, str], height: int) -> list[str]:
    """Each variant's name at the end of its line, moved apart so that no two overlap."""
    placed: list[float] = []
    out = []
    for want, end_x, variant in sorted(ends):
        at = max(want, placed[-1] + LABEL_GAP) if placed else want
        placed.append(at)
        out.append((at, end_x, variant))
    overflow = placed[-1] - (height - PAD - 16) if placed else 0
    return [
        f'<text x="{end_x + 10}" y="{at - max(overflow, 0) + 4}" class="name {colour[v]}">{e(v)}</text>'
        for at, end_x, v in out
    ]


def _legend(variants: list[str], colour: dict[str, str], dropped: dict[str, int]) -> str:
    keys = "".join(
        f'<span class="key"><i class="sw {colour[v]}"></i>{e(v)}'
        f"{f' (dropped in round {dropped[v]})' if v in dropped else ''}</span>"
        for v in variants
    )
    return f'<p class="legend race-legend">{keys} <span class="note">✕ dropped · bar: 95% interval</span></p>'


def _variant_marks(variant: str, mine: list[tuple[int, dict[str, Any]]], dropped: bool, x: Scale, y: Scale,
                   colour: str) -> list[str]:  # fmt: skip
    """One variant's line through its rounds, its intervals and a cross where it was dropped, in its
    own colour (a dropped variant's line dashed)."""
    dash = ' stroke-dasharray="5 3"' if dropped else ""
    path = " ".join(f"{x(r)},{y(s['mean'])}" for r, s in mine)
    parts = [f'<polyline points="{path}" class="trend {colour}"{dash}/>']
    for r, s in mine:
        if s.get("lo") is not None and s.get("hi") is not None:
            parts.append(
                f'<line x1="{x(r)}" y1="{y(s["lo"])}" x2="{x(r)}" y2="{y(s["hi"])}" class="ci {colour}"/>'
            )
        title = f"{e(variant)}, round {r}: {s['mean']:.3f} over {s['cases']} cases"
        parts.append(
            f'<circle cx="{x(r)}" cy="{y(s["mean"])}" r="4" class="{colour}"><title>{title}</title></circle>'
        )
    end_r, end = mine[-1]
    if dropped:
        parts.append(
            f'<text x="{x(end_r)}" y="{y(end["mean"]) - 8}" text-anchor="middle" class="drop">✕</text>'
        )
    return parts


def eliminations_table(stopping: dict[str, Any]) -> str:
    rows = [
        [e(d["variant"]), str(d["round"]), e(d["lost_to"]), num(d["delta"]), f"{d['p_value']:.3g}",
         f"{d['threshold']:.3g}", str(d["cases"])]
        for d in stopping.get("eliminations") or []
    ]  # fmt: skip
    if not rows:
        return '<p class="note">No variant dropped.</p>'
    return table(["dropped", "round", "behind", "by", "p (one-sided)", "threshold", "cases"], rows)
