"""What a matrix page shows: the filters, the text search, the sort and the page, and the outputs of
the page's rows (read from the blob store only for them)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import asdict, dataclass

from engine.errors import InputError
from engine.presentation.matrix import MatrixRow
from engine.store.projections.trials import TrialRecord

# all | failing (fail or flaky) | errors | grading_errors | differs (outputs differ across variants) |
# flaky | regressed (a variant fails a case the baseline passes)
SHOWS = ("all", "failing", "errors", "grading_errors", "differs", "flaky", "regressed")
SORTS = ("case", "score", "-score", "latency", "-latency", "cost", "-cost", "ttft", "-ttft")
ReadOutput = Callable[[TrialRecord], str | None]
Searched = Callable[[TrialRecord], bool]  # a trial's output or grader reasons hold the text (found ahead)


@dataclass(frozen=True, slots=True)
class MatrixQuery:
    show: str = "all"
    tag: str = ""
    q: str = ""  # text in the prompt, an output, the expected answer or a grader's reason
    regex: bool = False  # q is a regular expression (case-insensitive)
    repeats: bool = False  # every repeat of a cell its own row (as a table of trials shows them)
    sort: str = "case"  # case, or score / latency / cost / ttft ascending ("-" first: descending)
    offset: int = 0  # rows skipped: a page is offset // per_page + 1
    per_page: int = 50
    grading: int | None = None  # an earlier grading round (default: the latest)

    @property
    def page(self) -> int:
        return self.offset // self.per_page + 1 if self.per_page else 1

    def params(self, page: int | None = None, **changed: object) -> dict[str, object]:
        """The query string of this view (its page, or `page`) with some values changed: a deep link
        keeps every filter."""
        out = {**asdict(self), **changed}
        out |= {name: "1" if out[name] else "" for name in ("regex", "repeats")}
        out.pop("offset")
        kept = {k: v for k, v in out.items() if v not in ("", None) and v != getattr(DEFAULT, k)}
        number = self.page if page is None else page
        return kept | ({"page": number} if number != 1 else {})


DEFAULT = MatrixQuery()


def check(query: MatrixQuery) -> MatrixQuery:
    if query.show not in SHOWS:
        raise InputError("matrix", "show", f"expected one of {', '.join(SHOWS)}, got {query.show!r}")
    if query.sort not in SORTS:
        raise InputError("matrix", "sort", f"expected one of {', '.join(SORTS)}, got {query.sort!r}")
    if query.regex:
        try:
            re.compile(query.q)
        except re.error as exc:
            raise InputError("matrix", "q", f"a regular expression ({exc})") from None
    return query


def keep(row: MatrixRow, variants: list[str], query: MatrixQuery) -> bool:
    verdicts = row.verdicts(variants)
    if query.tag and query.tag not in row.tags:
        return False
    show = query.show
    if show == "failing":  # a failure is a graded output that failed: errors are not failures
        return any(v in ("fail", "flaky") for v in verdicts)
    if show == "errors":
        return any(c.errors for c in row.cells.values())
    if show == "grading_errors":
        return any(c.grading_errors for c in row.cells.values())
    if show == "differs":
        return row.differs()
    if show == "flaky":
        return "flaky" in verdicts
    if show == "regressed":
        return bool(verdicts) and verdicts[0] == "pass" and any(v in ("fail", "flaky") for v in verdicts[1:])
    return True


def matcher(query: MatrixQuery) -> Callable[[str], bool]:
    if query.regex:
        pattern = re.compile(query.q, re.IGNORECASE)
        return lambda text: pattern.search(text) is not None
    needle = query.q.lower()
    return lambda text: needle in text.lower()


def text_hit(
    row: MatrixRow, hit: Callable[[str], bool], read: ReadOutput, searched: Searched | None = None
) -> bool:
    """The case id, prompt, expected answer, then each trial's grader reasons and error, then outputs
    (blob reads last: most searches end before them); `searched`: reasons and outputs found ahead."""
    if any(hit(text) for text in (row.case, row.prompt, row.expected)):
        return True
    records = [r for c in row.cells.values() for r in c.records]
    if searched is not None:
        return any(hit(r.message) for r in records if r.message) or any(map(searched, records))
    if any(hit(g.reason) for r in records for g in r.grades if g.reason):
        return True
    if any(hit(r.message) for r in records if r.message):
        return True
    return any(hit(read(r) or "") for r in records if r.completed)


def sort_key(query: MatrixQuery, order: dict[str, int]) -> Callable[[MatrixRow], tuple[float, int]]:
    value = {"score": "score", "latency": "latency_ms", "cost": "cost_usd", "ttft": "ttft_ms"}.get(
        query.sort.lstrip("-"), ""
    )
    sign = -1.0 if query.sort.startswith("-") else 1.0

    def key(row: MatrixRow) -> tuple[float, int]:
        position = order.get(row.case, len(order))
        if not value:
            return (0.0, position)
        found = [m for c in row.cells.values() if (m := c.mean(value)) is not None]
        mean = sum(found) / len(found) if found else None
        return (float("inf") if mean is None else sign * mean, position)  # no figure: last

    return key


def select(variants: list[str], rows: list[MatrixRow], query: MatrixQuery, read: ReadOutput,
           order: dict[str, int], searched: Searched | None = None,
           ) -> tuple[int, list[MatrixRow]]:  # fmt: skip
    """(rows kept, the page's rows with their cells' outputs read)."""
    kept = [r for r in rows if keep(r, variants, query)]
    if query.q:
        hit = matcher(query)
        kept = [r for r in kept if text_hit(r, hit, read, searched)]
    if query.sort != "case":
        kept.sort(key=sort_key(query, order))
    page = kept[query.offset : query.offset + query.per_page]
    for row in page:
        for cell in row.cells.values():
            first = next((r for r in cell.records if r.completed), None)
            cell.output = read(first) if first is not None else None
    return len(kept), page


def pages(total: int, per_page: int) -> int:
    return max(1, -(-total // per_page))
