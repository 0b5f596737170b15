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
    return head + race_chart(rounds, stopping.get("eliminations") or []) + eliminations_table(stopping)


def race_chart(rounds: list[dict[str, Any]], eliminations: list[dict[str, Any]]) -> str:
    # a cost per pass with no pass is infinite (logged as the largest float): no point to draw
    points = [(r["round"], s) for r in rounds for s in r["standings"] if abs(s["mean"]) < 1e300]
    if not points:
        return ""
    values = [v for _, s in points for v in (s["mean"], s.get("lo"), s.get("hi")) if v is not None]
    lo, hi = min(values), max(values)
    span = (hi - lo) or 1.0
    height, last = 260, max(r["round"] for r in rounds)
    step = (WIDTH - LEFT - RIGHT) / max(last - 1, 1)

    def x(round_no: int) -> float:
        return round(LEFT + (round_no - 1) * step, 1)

    def y(value: float) -> float:
        return round(height - PAD - (value - lo) / span * (height - 2 * PAD), 1)

    dropped = {d["variant"] for d in eliminations}
    # round first: -0.001 would read "-0.00"
    parts = [f'<text x="4" y="{y(v) + 4}">{round(v, 2) + 0.0:.2f}</text>' for v in (lo, (lo + hi) / 2, hi)]
    parts += [
        f'<text x="{x(r)}" y="{height - 4}" text-anchor="middle">{r}</text>' for r in range(1, last + 1)
    ]
    for variant in dict.fromkeys(s["variant"] for _, s in points):
        mine = [(r, s) for r, s in points if s["variant"] == variant]
        parts += _variant_marks(variant, mine, variant in dropped, x, y)
    return _svg(height, "".join(parts), "race: each variant's objective by round, drops marked")


def _variant_marks(
    variant: str, mine: list[tuple[int, dict[str, Any]]], dropped: bool, x: Scale, y: Scale
) -> list[str]:
    """One variant's line through its rounds, its intervals, a cross where it was dropped, its name."""
    cls = "ns" if dropped else "sig"
    path = " ".join(f"{x(r)},{y(s['mean'])}" for r, s in mine)
    parts = [f'<polyline points="{path}" class="trend {cls}"/>']
    for r, s in mine:
        if s.get("lo") is not None and s.get("hi") is not None:
            parts.append(
                f'<line x1="{x(r)}" y1="{y(s["lo"])}" x2="{x(r)}" y2="{y(s["hi"])}" class="ci {cls}"/>'
            )
        title = f"{e(variant)}, round {r}: {s['mean']:.3f} over {s['cases']} cases"
        parts.append(
            f'<circle cx="{x(r)}" cy="{y(s["mean"])}" r="4" class="{cls}"><title>{title}</title></circle>'
        )
    end_r, end = mine[-1]
    if dropped:
        parts.append(
            f'<text x="{x(end_r)}" y="{y(end["mean"]) + 5}" text-anchor="middle" class="drop">✕</text>'
        )
    parts.append(f'<text x="{x(end_r) + 10}" y="{y(end["mean"]) + 4}">{e(variant)}</text>')
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
