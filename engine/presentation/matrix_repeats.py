"""A search that lands on the answer: each shown cell names the repeats whose output, grader reasons
or error hold the searched text (and, under the errors or grading-errors filter, the repeats that
errored or that a grader could not judge) and shows the first of them (not the cell's first repeat); the
matrix of every repeat makes each repeat its own row. And the highlight: a text cut into the parts
a search matched and the rest, for a template to mark (escaped there, as every value is)."""

from __future__ import annotations

import re
from collections.abc import Callable

from engine.presentation.matrix import MatrixCell, MatrixRow, has_grading_error
from engine.presentation.matrix_query import MatrixQuery, ReadOutput, matcher
from engine.store.projections.trials import TrialRecord

TrialHit = Callable[[TrialRecord], bool]  # the trial's own texts hold the search


def pattern_of(query: MatrixQuery) -> re.Pattern[str] | None:
    """The search as one case-insensitive pattern (a substring escaped), None without one."""
    if not query.q:
        return None
    return re.compile(query.q if query.regex else re.escape(query.q), re.IGNORECASE)


def trial_hit(query: MatrixQuery, read: ReadOutput, found_ahead: set[int] | None,
              searched: TrialHit | None = None) -> TrialHit:  # fmt: skip
    """Whether a trial's error, grader reasons, output or transcript match (as the row filter compares);
    `found_ahead`: the index rows whose texts a scan found, `searched`: the same, asked per trial."""
    matches = matcher(query)
    hit = lambda text: bool(text) and matches(text)  # noqa: E731

    def holds(rec: TrialRecord) -> bool:
        if hit(rec.message):
            return True
        if found_ahead is not None:
            return getattr(rec, "row", -1) in found_ahead
        if searched is not None:
            return searched(rec)
        if any(hit(g.reason) for g in rec.grades):
            return True
        return rec.completed and matches(read(rec) or "")

    return holds


# a filter that is about trials, not cases: its cells land on the trials it is about
TRIAL_FILTERS: dict[str, TrialHit] = {
    "errors": lambda rec: rec.status == "error",
    "grading_errors": has_grading_error,
}


def repeats_kept(query: MatrixQuery, searched: TrialHit | None) -> TrialHit | None:
    """Which trials a cell lands on: those the search finds and the filter is about (None: neither)."""
    about = TRIAL_FILTERS.get(query.show)
    if about is None or searched is None:
        return about or searched
    return lambda rec: about(rec) and searched(rec)


def land(page: list[MatrixRow], holds: TrialHit, read: ReadOutput) -> None:
    """Each cell's matching repeats, and the output of the first (read for it alone)."""
    for row in page:
        for cell in row.cells.values():
            found = [r for r in cell.records if holds(r)]
            cell.matches = [r.repeat for r in found]
            if found:
                first = next((r for r in found if r.completed), found[0])
                cell.shown = first.repeat
                cell.output = read(first) if first.completed else None


VERDICT_OF_STATUS = {"pass": "pass", "fail": "fail", "error": "error", "grading_error": "grading_error",
                     "ungraded": "ungraded", "skipped": "pending"}  # fmt: skip


def every_repeat(page: list[MatrixRow], read: ReadOutput) -> list[MatrixRow]:
    """The page's rows, one per repeat of each case: each cell one trial, its own verdict and output.
    After a search, only the repeats one of whose cells matched."""
    rows: list[MatrixRow] = []
    for row in page:
        numbers = sorted({r.repeat for c in row.cells.values() for r in c.records})
        searched = any(c.matches is not None for c in row.cells.values())
        matched = {n for c in row.cells.values() for n in (c.matches or [])}
        for n in numbers:
            if searched and matched and n not in matched:
                continue
            out = MatrixRow(row.case, row.tags, row.prompt, row.expected, repeat=n)
            for variant, cell in row.cells.items():
                rec = next((r for r in cell.records if r.repeat == n), None)
                if rec is not None:
                    out.cells[variant] = trial_cell(variant, rec, read, cell.matches)
            rows.append(out)
    return rows


def trial_cell(variant: str, rec: TrialRecord, read: ReadOutput, matches: list[int] | None) -> MatrixCell:
    cell = MatrixCell(variant, [rec], VERDICT_OF_STATUS.get(rec.status, "pending"))
    cell.output = read(rec) if rec.completed else None
    cell.shown = rec.repeat
    if matches is not None:
        cell.matches = [rec.repeat] if rec.repeat in matches else []
    return cell


def marked(text: str, pattern: re.Pattern[str] | None, limit: int = 200) -> list[tuple[str, bool]]:
    """The text as (part, matched) pieces, at most `limit` matches marked (the rest plain)."""
    if pattern is None or not text:
        return [(text, False)]
    parts: list[tuple[str, bool]] = []
    at = 0
    for n, m in enumerate(pattern.finditer(text)):
        if n >= limit:
            break
        if m.end() == m.start():
            continue
        parts += [(text[at : m.start()], False), (m.group(0), True)]
        at = m.end()
    parts.append((text[at:], False))
    return [p for p in parts if p[0]]


def excerpt_start(text: str, pattern: re.Pattern[str] | None, clip: int) -> int:
    """Where a clipped view of the text starts so that its first match shows (0: the start)."""
    if pattern is None or not text:
        return 0
    m = pattern.search(text)
    if m is None or m.end() <= clip:
        return 0
    return max(0, m.start() - clip // 3)
