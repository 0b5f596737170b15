"""Rendering for `engine compare`."""

from __future__ import annotations

import sys

import msgspec

from engine.views.compare import RunComparison


def print_comparison(result: RunComparison, as_json: bool) -> None:
    if as_json:
        sys.stdout.buffer.write(msgspec.json.encode(result) + b"\n")
        return
    from rich.text import Text

    from engine.cli.render import make_console, table

    console = make_console()
    for warning in result.warnings:
        console.print(Text(f"warning: {warning}", style="yellow"))
    title = f"{result.candidate_run} vs {result.baseline_run} ({result.shared_cases} shared cases)"
    header = ["variant", "metric", "baseline", "candidate", "delta", "p", "direction", "regressed"]
    rows = [
        [
            m.variant, m.metric, _num(m.baseline), _num(m.candidate), _num(m.delta), _num(m.p_value),
            m.direction, "yes" if m.regressed else "no",
        ]
        for m in result.metrics
    ]  # fmt: skip
    console.print(table(title, header, rows, left=2))
    if result.regressed:
        console.print(Text("REGRESSED: " + "; ".join(result.regressions), style="red"))
    else:
        console.print("no regression")


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"
