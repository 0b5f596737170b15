"""Terminal rendering of reports, run lists and status. Tables are engine's own (presentation.term_table),
written straight to stdout; rich draws the report's coloured lines, imported only for those."""

from __future__ import annotations

import datetime
import sys
from typing import Any

import msgspec

from engine.presentation.term_table import Columns, table


def print_report(data: bytes, as_json: bool) -> None:
    if as_json:
        sys.stdout.buffer.write(data + b"\n")
        sys.stdout.flush()
        return
    from engine.presentation.terminal import CommandText, report_renderables  # the report's model too

    console = make_console()
    for renderable in report_renderables(data, console.width):
        console.print(renderable, highlight=False, soft_wrap=isinstance(renderable, CommandText))


WIDTH = 100  # every table fits a 100-column terminal; wider terminals get the same layout


def console_width() -> int:
    """A terminal narrower than 100 columns gets its own width; anything else (a pipe, a file, a wide
    terminal) gets 100: the same layout everywhere, tables' text columns wrapped to fit."""
    import shutil

    width = shutil.get_terminal_size((WIDTH, 24)).columns if sys.stdout.isatty() else WIDTH
    return min(width, WIDTH)


def make_console() -> Any:
    from rich.console import Console

    return Console(width=console_width())


def print_table(title: str, header: list[str], rows: list[list[str]], left: Columns = 1) -> None:
    """The table on stdout: as wide as the terminal allows (100 columns at most), styled on one."""
    sys.stdout.write(table(title, header, rows, left, console_width(), styled_stdout()))


def print_table_to(
    console: Any, title: str, header: list[str], rows: list[list[str]], left: Columns = 1
) -> None:
    """The same table among the lines a rich console prints (coloured warnings and verdicts): rich
    shows its bold header and italic title as it shows its own styles, or not at all."""
    from rich.text import Text

    console.print(Text.from_ansi(table(title, header, rows, left, console.width, styled=True)))


def styled_stdout() -> bool:
    """Bold and italic only on a terminal that shows them (not a pipe, a file or a dumb terminal);
    NO_COLOR asks for no colours, and the tables have none."""
    import os

    return sys.stdout.isatty() and os.environ.get("TERM", "").lower() not in ("dumb", "unknown")


def _when(ts: float, form: str = "%Y-%m-%d %H:%M:%S") -> str:
    return datetime.datetime.fromtimestamp(ts).strftime(form) if ts else "-"


def print_runs(runs: list[Any], as_json: bool, words: list[str] | None = None) -> None:
    if as_json:
        sys.stdout.buffer.write(msgspec.json.encode(runs) + b"\n")
        return
    # to the minute, and the origin only when some run was scheduled: a 22-character run id and a
    # 30-character experiment name keep one line at 100 columns
    said = words or [s.status for s in runs]
    rows = [
        [s.run_id, s.experiment, word, str(s.trials_total) if s.trials_total else "-",
         _when(s.started_ts, "%Y-%m-%d %H:%M"), s.origin]
        for s, word in zip(runs, said, strict=True)
    ]  # fmt: skip
    header = ["run id", "experiment", "status", "trials", "started", "origin"]
    if all(s.origin == "manual" for s in runs):
        header, rows = header[:-1], [row[:-1] for row in rows]
    print_table("", header, rows, left={0, 1, 2, 4, 5})


def print_status(view: Any, as_json: bool) -> None:
    if as_json:
        sys.stdout.buffer.write(msgspec.json.encode(view) + b"\n")
        return
    from engine.presentation.status_words import counts_line

    v = view
    print(f"{v.run_id}  {v.experiment}  {v.outcome or v.status}  elapsed {v.elapsed_s:.0f} s")
    if v.max_experiments is None:
        pct = 100.0 * v.trials_done / v.trials_total if v.trials_total else 0.0
        print(f"trials {v.trials_done}/{v.trials_total} ({pct:.0f}%), in flight {v.in_flight}", end="")
    else:
        print(f"variations {v.variations}/{v.max_experiments}, accepted {v.accepted}", end="")
        print(f", trials {v.trials_done}, in flight {v.in_flight}", end="")
    print(f" · {counts_line(v.passed, v.failed, v.errors)}")
    if v.message:
        print(v.message)


def print_best(best: list[Any], as_json: bool) -> None:
    if as_json:
        sys.stdout.buffer.write(msgspec.json.encode(best) + b"\n")
        return
    if not best:
        print("no accepted variations yet")
        return
    rows = [
        [b.parameter, str(b.value), f"{b.candidate_score:.4f}", f"{b.delta:+.4f}", b.run_id, b.origin,
         _when(b.ts)]
        for b in best
    ]  # fmt: skip
    header = ["parameter", "value", "score", "delta", "run id", "origin", "when"]
    print_table("best accepted variation per parameter", header, rows, left={0, 1, 4, 5, 6})
