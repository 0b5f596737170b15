"""The report in a terminal (rich): the shared sections as engine's compact tables (term_table, given
to rich as styled text) and indented lines."""

from __future__ import annotations

from typing import Any

from rich.text import Text

from engine.presentation.model import ReportInput, as_report
from engine.presentation.report.status import status_lines, winner_line
from engine.presentation.sections import DECIDING, Section, sections
from engine.presentation.status_words import report_word, term_style
from engine.presentation.term_table import table

RERUN = "  rerun: "
MAX_ROWS = 10  # a terminal shows the first rows of a long list; the JSON report has them all


class CommandText(Text):
    """A command for a person to copy, on its own line: printed whole, never wrapped mid-command."""


def _title(section: Section) -> str:
    return section.title[0].lower() + section.title[1:]


def section_renderables(section: Section, width: int = 100) -> list[Any]:
    out: list[Any] = []
    if section.table is not None:
        t = section.table
        header = t.header  # the labels every surface shows (report.tables): never the terminal's own
        rows = t.rows if section.key in DECIDING else t.rows[:MAX_ROWS]
        out.append(Text.from_ansi(table(section.title, header, rows, t.left, width, styled=True)))
        if t.more(len(rows)):  # one line for every row left out, however the list was cut
            out.append(Text(f"  {t.more(len(rows))}"))
        if section.note:
            out.append(Text(section.note))
        prefix = "  "
    else:
        out.append(Text(f"{_title(section)}:", style="red" if "errors" in section.key else ""))
        prefix = "  "
    for line in section.lines:
        text, rerun, command = line.partition(RERUN)
        out.append(Text(f"{prefix}{text}" + (", rerun it with:" if rerun else "")))
        if rerun:
            out.append(CommandText(f"    {command}"))
    return out


def report_renderables(report: ReportInput, width: int = 100) -> list[Any]:
    """Text objects, not markup: names and error messages are user data and may hold brackets; the
    tables are drawn `width` columns wide at most."""
    r = as_report(report)
    word = report_word(r)
    partial = "  (partial)" if r.is_partial and word != "partial" else ""
    out: list[Any] = [
        Text.assemble((r.experiment, "bold"), f"  run {r.run_id}  ", (word, term_style(word)), partial)
    ]
    out += [Text(line, style="yellow") for line in status_lines(r)]
    said_winner = False
    for section in sections(r):
        if section.key not in DECIDING and not said_winner:
            out.append(Text(winner_line(r)))
            said_winner = True
        out += section_renderables(section, width)
    if not said_winner:
        out.append(Text(winner_line(r)))
    return out
