"""Terminal rendering of reports, run lists and status (rich tables)."""

from __future__ import annotations

import datetime
import json
import sys
from typing import Any

import msgspec
from rich.text import Text

from engine.cli import labels_view
from engine.cli import report_view as view


def print_report(data: bytes, as_json: bool) -> None:
    if as_json:
        sys.stdout.buffer.write(data + b"\n")
        sys.stdout.flush()
        return
    console = make_console()
    for renderable in report_renderables(json.loads(data)):
        console.print(renderable, highlight=False, soft_wrap=isinstance(renderable, CommandText))


class CommandText(Text):
    """A command for a person to copy, on its own line: printed whole, never wrapped mid-command."""


RERUN = "  rerun: "
# the terminal's results table: short headers (their figures are narrower than "cases p/f/fl/e"), so
# a variant's name and its "(baseline, winner)" marks keep one line at 100 columns
SHORT = {"pass rate": "pass", "cases p/f/fl/e": "p/f/fl/e"}
TERMINAL_RESULT_HEADER = [SHORT.get(h, h) for h in view.RESULT_HEADER]
RESULTS_TITLE = "results (p/f/fl/e: cases passed, failed, flaky, errored)"


WIDTH = 100  # every table fits a 100-column terminal; wider terminals get the same layout


def make_console() -> Any:
    """A terminal narrower than 100 columns gets its own width; anything else (a pipe, a file, a wide
    terminal) gets 100, so tables never wrap and are never cut."""
    import shutil

    from rich.console import Console

    width = shutil.get_terminal_size((WIDTH, 24)).columns if sys.stdout.isatty() else WIDTH
    return Console(width=min(width, WIDTH))


def table(title: str, header: list[str], rows: list[list[str]], left: int | set[int] = 1) -> Any:
    """A compact table (no vertical rules): text columns (the first `left`, or those indexes) to the
    left, figures to the right, long names folded."""
    from rich import box
    from rich.table import Table

    out = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left", pad_edge=False, collapse_padding=True)
    texts = set(range(left)) if isinstance(left, int) else left
    for i, name in enumerate(header):
        text = i in texts
        if text:  # only text columns give way when the terminal is narrow: figures never wrap
            out.add_column(name, justify="left", overflow="fold", max_width=30)
        else:
            out.add_column(name, justify="right", no_wrap=True)
    for row in rows:
        out.add_row(*row)
    return out


def report_renderables(r: dict[str, Any]) -> list[Any]:
    """Text objects, not markup: names and error messages are user data and may hold brackets."""
    partial = "  (partial)" if r["is_partial"] else ""
    heading = f"  run {r['run_id']}  {r['status']}{partial}"
    out: list[Any] = [Text.assemble((r["experiment"], "bold"), heading)]
    out += [Text(line, style="yellow") for line in view.status_lines(r)]
    out.append(table(RESULTS_TITLE, TERMINAL_RESULT_HEADER, view.result_rows(r)))
    basis = view.score_basis_note(r)
    if basis:
        out.append(Text(basis))
    out.append(table("latency and spend", view.SPEND_HEADER, view.spend_rows(r)))
    if r["comparisons"]:
        out.append(table(view.comparison_title(r), view.COMPARISON_HEADER, view.comparison_rows(r)))
    if r.get("pairwise"):
        title = f"pairwise judge: side by side against {r['pairwise'][0]['baseline']}"
        out.append(table(title, view.PAIRWISE_HEADER, view.pairwise_rows(r), left=2))
    if labels_view.has_labels(r):
        rows = labels_view.label_rows(r)
        out.append(table(labels_view.TITLE, labels_view.LABELS_HEADER, rows, left=labels_view.TEXT_COLUMNS))
        out += [Text(f"  {line}") for line in labels_view.label_lines(r)]
    if r.get("variations"):
        title = "tuning: variations tried, in order"
        bound = r.get("session_error_bound")
        if bound is not None:
            title += f" (chance that some accepted change does nothing: at most {bound:.0%})"
        out.append(table(title, view.VARIATION_HEADER, view.variation_rows(r), left=3))
    out.append(Text(view.winner_line(r)))
    errors = view.error_lines(r)
    if errors:
        out.append(Text("errors by class:", style="red"))
        out += [Text(f"  {line}") for line in errors]
    if r["flaky_cases"]:
        out.append(Text(f"flaky cases: {len(r['flaky_cases'])}"))
    for title, lines in view.line_sections(r):
        out.append(Text(f"{title[0].lower()}{title[1:]}:"))
        for line in lines:
            text, rerun, command = line.partition(RERUN)
            out.append(Text(f"  {text}" + (", rerun it with:" if rerun else "")))
            if rerun:
                out.append(CommandText(f"    {command}"))
    return out


def _when(ts: float, form: str = "%Y-%m-%d %H:%M:%S") -> str:
    return datetime.datetime.fromtimestamp(ts).strftime(form) if ts else "-"


def print_runs(runs: list[Any], as_json: bool) -> None:
    if as_json:
        sys.stdout.buffer.write(msgspec.json.encode(runs) + b"\n")
        return
    # to the minute, and the origin only when some run was scheduled: a 22-character run id and a
    # 30-character experiment name keep one line at 100 columns
    rows = [
        [s.run_id, s.experiment, s.status, str(s.trials_total) if s.trials_total else "-",
         _when(s.started_ts, "%Y-%m-%d %H:%M"), s.origin]
        for s in runs
    ]  # fmt: skip
    header = ["run id", "experiment", "status", "trials", "started", "origin"]
    if all(s.origin == "manual" for s in runs):
        header, rows = header[:-1], [row[:-1] for row in rows]
    make_console().print(table("", header, rows, left={0, 1, 2, 4, 5}))


def print_status(view: Any, as_json: bool) -> None:
    if as_json:
        sys.stdout.buffer.write(msgspec.json.encode(view) + b"\n")
        return
    v = view
    print(f"{v.run_id}  {v.experiment}  {v.status}  elapsed {v.elapsed_s:.0f} s")
    if v.max_experiments is None:
        pct = 100.0 * v.trials_done / v.trials_total if v.trials_total else 0.0
        print(f"trials {v.trials_done}/{v.trials_total} ({pct:.0f}%), in flight {v.in_flight}", end="")
    else:
        print(f"variations {v.variations}/{v.max_experiments}, accepted {v.accepted}", end="")
        print(f", trials {v.trials_done}, in flight {v.in_flight}", end="")
    print(f", errors {v.errors}, passed {v.passed}")
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
    make_console().print(table("best accepted variation per parameter", header, rows, left={0, 1, 4, 5, 6}))
