"""`engine history`: a metric over the runs of one experiment, and which of them are green."""

from __future__ import annotations

import sys
import time
from typing import Any

import msgspec

from engine.errors import InputError


def print_history(
    log: Any, experiment: str, metric: str, variant: str | None, as_json: bool, every: bool = False
) -> None:
    from engine.views.history import METRICS, history, sparkline

    if metric not in METRICS:
        raise InputError(
            "engine history", "--metric", f"expected one of {', '.join(METRICS)}, got {metric!r}"
        )
    points = history(log, experiment, variant, narrowed=every)
    if not points:
        raise InputError("engine history", "EXPERIMENT", f"no runs of an experiment named {experiment!r}")
    if as_json:
        sys.stdout.buffer.write(msgspec.json.encode(points) + b"\n")
        return
    from engine.cli.render import print_table

    values = [getattr(p, metric) for p in points]
    rows = [
        [p.run_id, p.status, time.strftime("%Y-%m-%d %H:%M", time.localtime(p.started)) if p.started else "-",
         "yes" if p.green else "", _num(getattr(p, metric)), p.spec_hash[:8]]
        for p in points
    ]  # fmt: skip
    header = ["run", "status", "started", "green", metric, "spec"]
    names = sorted({p.variant for p in points if p.variant})
    which = names[0] if len(names) == 1 else "the variant each row names"
    if len(names) > 1:  # runs whose baselines differ: each row names its own
        header.insert(4, "variant")
        for row, p in zip(rows, points, strict=True):
            row.insert(4, p.variant or "-")
    if not variant and len(names) == 1:
        which = "the baseline" if which == "baseline" else f"{which} (the baseline)"
    print_table(f"{experiment}: {metric} of {which}", header, rows, left=4)
    print(f"{metric} {sparkline(values)}  ({len(points)} runs; last green: {_last_green(points)})")


def _last_green(points: list[Any]) -> str:
    greens = [p.run_id for p in points if p.green]
    return greens[-1] if greens else "none"


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"
