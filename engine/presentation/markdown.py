"""The report as GitHub-flavoured Markdown (`engine report --markdown`), e.g. for CI step summaries."""

from __future__ import annotations

from engine.presentation.model import ReportInput, as_report
from engine.presentation.report.status import status_lines, winner_line
from engine.presentation.sections import DECIDING, Section, sections
from engine.presentation.status_words import report_word

_MD_SPECIAL = "\\`*_[]|~"


def md_escape(text: object) -> str:
    """Safe inside a table cell or a line: no HTML, no emphasis, no cell breaks, one line."""
    out = str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    for char in _MD_SPECIAL:
        out = out.replace(char, "\\" + char)
    return " ".join(out.splitlines())


def _table(header: list[str], rows: list[list[str]], left: frozenset[int]) -> list[str]:
    """A table whose `left` columns are text (left-aligned); the rest are figures."""
    align = [":---" if i in left else "---:" for i in range(len(header))]
    lines = ["| " + " | ".join(map(md_escape, header)) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(map(md_escape, row)) + " |" for row in rows]
    return lines + [""]


WARNING = "Warning: "  # how report_status.status_lines marks a warning


def _status_line(line: str) -> str:
    """A quoted line; only the report's warnings are marked as such."""
    text = line.removeprefix(WARNING)
    return f"> **Warning:** {md_escape(text)}" if text != line else f"> {md_escape(line)}"


def section_lines(section: Section) -> list[str]:
    lines = [f"### {md_escape(section.title)}", ""]
    if section.table is not None:
        lines += _table(section.table.header, section.table.rows, section.table.left)
        if section.table.more():
            lines += [md_escape(section.table.more()), ""]
    if section.note:
        note = section.note[0].upper() + section.note[1:]
        lines += [md_escape(note), ""]
    if section.lines:
        lines += [f"- {md_escape(line)}" for line in section.lines] + [""]
    return lines


def report_markdown(report: ReportInput) -> str:
    r = as_report(report)
    word = report_word(r)
    partial = " (partial)" if r.is_partial and word != "partial" else ""
    lines = [f"## {md_escape(r.experiment)}: run {md_escape(r.run_id)}, {md_escape(word)}{partial}", ""]
    status = status_lines(r)
    lines += [_status_line(line) for line in status] + ([""] if status else [])
    strategy = md_escape(r.strategy)
    lines += [f"Score strategy: {strategy}; intervals are 95% CIs (score CI: of the mean score).", ""]
    label, _, rest = winner_line(r).partition(": ")
    winner = [f"**{label}:** {md_escape(rest)}", ""]
    for section in sections(r):
        if winner and section.key not in DECIDING:
            lines += winner
            winner = []
        lines += section_lines(section)
    lines += winner
    return "\n".join(lines).rstrip("\n") + "\n"

