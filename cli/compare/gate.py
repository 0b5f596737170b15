"""`engine compare`'s work: the pair of variants asked for, the last green run as
the baseline, and the comparison's rendering."""

from __future__ import annotations

import sys
from typing import Any

import msgspec

from engine.presentation.compare_table import CASE_HEADER, CASE_TEST, case_rows, metric_tables
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


def gate_with(gate: Any, overrides: dict[str, float | None]) -> Any:
    """The run's gate with the thresholds given on the command line, checked as a file's [gate] is:
    a NaN threshold would let every comparison pass, a negative one fail it."""
    from engine.errors import InputError
    from engine.events.spec import GateSpec
    from engine.input.parsing import split_validation_error

    given = {name: value for name, value in overrides.items() if value is not None}
    try:
        return msgspec.convert({**msgspec.to_builtins(gate), **given}, GateSpec)
    except msgspec.ValidationError as exc:
        field, expected = split_validation_error(str(exc))
        option = "--" + field.replace("_", "-")
        raise InputError("engine compare", option, f"{expected}, got {given.get(field)}") from None


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
    return point is not None and point.status.startswith("completed") and not point.green


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

    from engine.cli.render import make_console, print_table_to
    from engine.cli.wrap import fold

    console = make_console()
    for warning in result.warnings:
        if warning != NOTHING:  # said last, as the verdict
            console.print(Text(f"warning: {warning}", style="yellow"))
    if result.spec_differences:  # lines, not a table: a field's path is long and read whole
        console.print("spec fields that differ (baseline -> candidate):")
        for d in result.spec_differences:  # folded at 100 columns, a long value kept whole on its line
            console.print(Text(fold(f"  {d.field}: {d.baseline} -> {d.candidate}")), soft_wrap=True)
    if result.nothing_to_compare:
        console.print(Text(NOTHING, style="yellow"))
        return
    title = f"{result.candidate_run} vs {result.baseline_run} ({result.shared_cases} shared cases)"
    for pair, header, rows in metric_tables(result.metrics):
        print_table_to(console, f"{title}: {pair}", header, rows, left=1)
    margins = margin_line(result.metrics)
    if margins:
        console.print(Text(margins))
    shown = (("newly failing", result.newly_failing), ("newly passing", result.newly_passing),
             ("newly erroring", result.newly_erroring))  # fmt: skip
    for label, changes in shown:
        if changes:
            print_table_to(console, f"cases {label} ({CASE_TEST})", CASE_HEADER, case_rows(changes), left=2)
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
        what = {"p95_latency_ms": "latency", "p95_ttft_ms": "TTFT"}.get(m.metric, "cost")
        parts.append(f"{m.variant} {what} {m.run_margin:.0%} ({source})")
    if not parts:
        return ""
    return "run-to-run margins (a rise must clear 1 + threshold beyond them): " + ", ".join(parts)
