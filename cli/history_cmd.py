"""`engine history` and `engine judge-audit`: runs over time and which are green, judge stability."""

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
    from engine.cli.render import console_width, make_console
    from engine.presentation.plain_table import plain_stdout, plain_text
    from engine.presentation.term_table import table

    values = [getattr(p, metric) for p in points]
    rows = [
        [p.run_id, p.status, time.strftime("%Y-%m-%d %H:%M", time.localtime(p.started)) if p.started else "-",
         "yes" if p.green else "", _num(getattr(p, metric)), p.spec_hash[:8]]
        for p in points
    ]  # fmt: skip
    title = f"{experiment}: {metric}, oldest first"
    header = ["run", "status", "started", "green", metric, "spec"]
    spark = sparkline(values)
    line = f"{metric} {spark}  ({len(points)} runs; last green: {_last_green(points)})"
    width = console_width()
    text = plain_stdout(title, header, rows, 4, width)
    # the line as rich prints it when it is plain and fits (its bars are one column each; rich would
    # colour its figures on a terminal, this does not), else the table and the line by rich
    if text is not None and len(line) <= width and plain_text(line.replace(spark, " " * len(spark))):
        sys.stdout.write(f"{text}{line}\n")
        return
    console = make_console()
    console.print(table(title, header, rows, left=4))
    console.print(line)


def _last_green(points: list[Any]) -> str:
    greens = [p.run_id for p in points if p.green]
    return greens[-1] if greens else "none"


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def print_audit(audit: Any, as_json: bool) -> None:
    if as_json:
        sys.stdout.buffer.write(msgspec.json.encode(audit) + b"\n")
        return
    from engine.cli.render import make_console, print_table
    from engine.presentation.term_table import table

    header = ["judge", "outputs", "same score", "mean change", "max change", "pass flips", "unreadable"]
    rows = [
        [j.grader, str(j.sampled), str(j.same_score), _num(j.mean_abs_change), _num(j.max_abs_change),
         str(j.pass_flips), str(j.unparseable)]
        for j in audit.judges
    ]  # fmt: skip
    title = f"judge audit of run {audit.run_id} (scores on 0-1)"
    if audit.people is None:  # the judges' table alone: plain when it can be
        print_table(title, header, rows)
        return
    console = make_console()
    console.print(table(title, header, rows))
    from rich.text import Text

    from engine.presentation import labels_view

    rows = labels_view.label_rows(audit.people)
    console.print(table(labels_view.TITLE, labels_view.LABELS_HEADER, rows, left=labels_view.TEXT_COLUMNS))
    for line in labels_view.label_lines(audit.people):
        console.print(Text(f"  {line}"))
