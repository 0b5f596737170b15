"""The points a tuning session may try: each parameter's grid, its steps and a value's neighbours.

A parameter's grid is anchored at its default (the default is always a grid point, so an integer
`top_k` defaulting to 40 with step 5 starts at 40, not at the 41 a grid counted from `min = 1`
would give), runs in `step`s both ways and includes `min` and `max`. Integer parameters step by
whole numbers. A configuration (`Config`) is every tuned parameter's value, as a hashable key:
"tried" always means tried with the other parameters as they are now.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from engine.events.spec import ParameterRange, TuneSpec

CONTINUOUS_GRID_POINTS = 10
Config = tuple[tuple[str, float], ...]


def grid_step(p: ParameterRange) -> float:
    """The distance between neighbouring grid points: `step`, or a tenth of the range without one."""
    step = p.step or (p.max - p.min) / CONTINUOUS_GRID_POINTS
    return max(1.0, float(round(step))) if p.whole else step


def _anchor(p: ParameterRange) -> float:
    return float(round(p.default)) if p.whole else p.default


def quantize(p: ParameterRange, value: float) -> float:
    """Clamp to [min, max] and, with a `step`, snap to the nearest grid point (no floating-point drift)."""
    value = min(max(value, p.min), p.max)
    if p.step:
        step, anchor = grid_step(p), _anchor(p)
        snapped = anchor + round((value - anchor) / step) * step
        inside = [x for x in (snapped, p.min, p.max) if p.min <= x <= p.max]
        value = min(inside, key=lambda x: (abs(x - value), x))
    return float(round(value)) if p.whole else round(value, 10)


def grid_points(p: ParameterRange) -> list[float]:
    step, anchor = grid_step(p), _anchor(p)
    if step <= 0:
        return [quantize(p, p.min)]
    below = math.floor((anchor - p.min) / step + 1e-9)
    above = math.floor((p.max - anchor) / step + 1e-9)
    points = {quantize(p, anchor + i * step) for i in range(-below, above + 1)}
    return sorted(points | {quantize(p, p.min), quantize(p, p.max)})


def nearest_first(points: list[float], value: float) -> list[float]:
    """The grid outward from `value`: the closest points first, the lower one first on a tie."""
    return sorted(points, key=lambda x: (round(abs(x - value), 9), x))


def neighbours(p: ParameterRange, value: float, radius: float) -> list[float]:
    """The values within `radius` steps of `value`, both ways (at least the adjacent ones)."""
    step, reach = grid_step(p), max(1, math.floor(radius + 1e-9))
    found = {quantize(p, value + sign * i * step) for i in range(1, reach + 1) for sign in (-1, 1)}
    return sorted(found - {value})


def defaults(spec: TuneSpec) -> dict[str, float]:
    return {p.name: quantize(p, p.default) for p in spec.parameters}


def config_of(values: Mapping[str, float], parameter: str | None = None, value: float = 0.0) -> Config:
    """The configuration `values` make, with `parameter` set to `value` when one is given."""
    changed = dict(values)
    if parameter is not None:
        changed[parameter] = value
    return tuple(sorted((name, round(float(v), 10)) for name, v in changed.items()))
