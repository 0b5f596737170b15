"""`engine compare`'s work beside its options: the pair of variants asked for, the last green run as
the baseline, and the comparison's rendering."""

from __future__ import annotations

import sys
from typing import Any

import msgspec

from engine.presentation.report.numbers import money, p_value
from engine.views.compare.comparison import NOTHING, RunComparison
from engine.views.compare.gates import MetricDelta


def variant_pair(base: str | None, candidate: str | None) -> tuple[str, str] | None:
    if base is None and candidate is None:
        return None
    if base is None or candidate is None:
        from engine.errors import InputError

        given = "--variant" if base is None else "--base-variant"
        raise InputError("engine compare", given, "expected --base-variant A and --variant B together")
    return base, candidate


NOT_GREEN_NOTE = (
    "note: this run will not be a baseline either: a candidate significantly worse than its baseline (or\n"
    "  with more errors) keeps a run from going green; mark a run green to gate against it:"
)


def own_verdict_not_green(log: Any, run_id: str) -> bool:
    """The candidate completed, yet is not green: say why no baseline will ever appear by itself."""
    from engine.runtime.run_status import summarize
    from engine.views.history import history

    summary = summarize(log, run_id)
    point = next((p for p in history(log, summary.experiment, narrowed=True) if p.run_id == run_id), None)
    return point is not None and point.status == "completed" and not point.green


def last_green(
    log: Any, experiment: str, cand_id: str, from_dir: str | None, required: bool, skipped: list[str]
) -> tuple[Any, str] | None:
    """(a store holding the base and the candidate, the base's id); None when there is none and
    none is required. Damaged bundles of `from_dir` are skipped, each named in `skipped` (and on
    stderr when no baseline is found: the comparison that would carry them does not happen)."""
    from engine.errors import InputError
    from engine.views.bundle_sources import last_green_anywhere

    found = last_green_anywhere(log, experiment, cand_id, from_dir, skipped.append)
    if found is None:
        for warning in skipped:
            print(f"warning: {warning}", file=sys.stderr)
    if found is None and required:
        where = f" (nor among the bundles in {from_dir})" if from_dir else ""
        raise InputError("engine compare", "BASE", f"no green run of {experiment!r} before {cand_id}{where}: "
                         "mark one with `engine mark RUN green`")  # fmt: skip
    return found


def print_comparison(result: RunComparison, as_json: bool) -> None:
    if as_json:
        sys.stdout.buffer.write(msgspec.json.encode(result) + b"\n")
        return
    from rich.text import Text

    from engine.cli.render import make_console
    from engine.presentation.term_table import table

    console = make_console()
    for warning in result.warnings:
        if warning != NOTHING:  # said last, as the verdict
            console.print(Text(f"warning: {warning}", style="yellow"))
    if result.spec_differences:  # lines, not a table: a field's path is long and read whole
        console.print("spec fields that differ (baseline -> candidate):")
        for d in result.spec_differences:
            console.print(Text(f"  {d.field}: {d.baseline} -> {d.candidate}"), soft_wrap=True)
    if result.nothing_to_compare:
        console.print(Text(NOTHING, style="yellow"))
        return
    title = f"{result.candidate_run} vs {result.baseline_run} ({result.shared_cases} shared cases)"
    header = ["variant", "metric", "baseline", "candidate", "delta", "p / ratio CI", "direction", "regressed"]
    rows = [
        [
            m.variant, m.metric, *[_figure(m.metric, v) for v in (m.baseline, m.candidate, m.delta)],
            _evidence(m),
            m.note or m.direction, "yes" if m.regressed else "no",
        ]
        for m in result.metrics
    ]  # fmt: skip
    console.print(table(title, header, rows, left=2))
    margins = margin_line(result.metrics)
    if margins:
        console.print(Text(margins))
    shown = (("newly failing", result.newly_failing), ("newly passing", result.newly_passing),
             ("newly erroring", result.newly_erroring))  # fmt: skip
    for label, changes in shown:
        if changes:
            case_rows = [
                [c.variant, c.case, c.baseline, c.candidate, p_value(c.p_value_adjusted)] for c in changes
            ]
            header = ["variant", "case", "baseline", "candidate", "p (Holm)"]
            console.print(
                table(f"cases {label} (Fisher's exact test on their replicas)", header, case_rows, left=2)
            )
    if result.regressed:
        console.print(Text("REGRESSED: " + "; ".join(result.regressions), style="red"))
    else:
        console.print("no regression")


def margin_line(metrics: list[MetricDelta]) -> str:
    """How far the ratio intervals were widened for run-to-run variation, and where that came from."""
    parts = []
    for m in metrics:
        if m.run_margin is None:
            continue
        source = f"from {m.run_margin_runs} earlier runs" if m.run_margin_runs else "default"
        what = "latency" if m.metric == "p95_latency_ms" else "cost"
        parts.append(f"{m.variant} {what} {m.run_margin:.0%} ({source})")
    if not parts:
        return ""
    return "run-to-run margins (a rise must clear 1 + threshold beyond them): " + ", ".join(parts)


def _evidence(m: MetricDelta) -> str:
    """The adjusted p of a paired metric, or the interval of a ratio metric (latency, cost)."""
    if m.ratio_ci is not None:
        return f"x{m.ratio_ci[0]:.3g}-{m.ratio_ci[1]:.3g}"
    return p_value(m.p_value_adjusted if m.p_value_adjusted is not None else m.p_value)


def _figure(metric: str, value: float | None) -> str:
    """Money in fixed decimals (never 3.72e-05), other figures to 4 significant digits."""
    if "cost" in metric:
        return money(value)
    return "-" if value is None else f"{value:.4g}"
