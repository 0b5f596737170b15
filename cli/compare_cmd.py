"""Rendering for `engine compare`."""

from __future__ import annotations

import sys

import msgspec

from engine.compare import Comparison


def print_comparison(result: Comparison, as_json: bool) -> None:
    if as_json:
        sys.stdout.buffer.write(msgspec.json.encode(result) + b"\n")
        return
    from rich.console import Console
    from rich.table import Table

    console = Console()
    for warning in result.warnings:
        console.print(f"[yellow]warning:[/] {warning}")
    table = Table(
        title=f"{result.candidate_run} vs {result.baseline_run} ({result.shared_cases} shared cases)"
    )
    for name in ("variant", "metric", "baseline", "candidate", "delta", "p", "direction", "regressed"):
        table.add_column(name)
    for m in result.metrics:
        table.add_row(
            m.variant, m.metric, _num(m.baseline), _num(m.candidate), _num(m.delta), _num(m.p_value),
            m.direction, "[red]yes[/]" if m.regressed else "no",
        )  # fmt: skip
    console.print(table)
    console.print(
        "[red]REGRESSED[/]: " + "; ".join(result.regressions) if result.regressed else "no regression"
    )


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"
