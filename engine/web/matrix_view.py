"""The matrix's data for the page and the API: cases x variants with verdicts and outputs, from the
run's kept trial index (engine.presentation.matrix builds it; this reads the request). A text search
finds outputs and grader reasons in the index's kept texts, one scan per search, not a blob per trial."""

from __future__ import annotations

import re
from collections.abc import Mapping

from engine.events.spec import ReplicaAggregation
from engine.presentation.matrix import MatrixCell, MatrixRow, build_rows
from engine.presentation.matrix_columns import select_columns
from engine.presentation.matrix_query import MatrixQuery, check, matcher, select
from engine.presentation.matrix_repeats import every_repeat, land, repeats_kept, trial_hit
from engine.store.contract import EventStore
from engine.store.trial_index.search import search_rows
from engine.web.data import IndexedView, RunView
from engine.web.query_params import flag, int_param
from engine.web.transcript_search import folded_search, transcript_rows

OUTPUT_CHARS = 2000  # an output in the JSON matrix is cut here; the trials API has it whole
MAX_PER_PAGE = 500


# what the matrix page, its API and its downloads read
PARAMS = ("show", "tag", "q", "regex", "repeats", "sort", "page", "per_page", "limit", "offset", "grading")


def query_of(params: Mapping[str, str], per_page: int = 50) -> MatrixQuery:
    """The page's query string: show, tag, q, regex, repeats, sort, page (from 1), per_page; the API's
    limit and offset."""
    asked = params.get("per_page", params.get("limit"))
    size = min(max(int_param(asked, per_page, "per_page/limit"), 1), MAX_PER_PAGE)
    page = (max(int_param(params.get("page"), 1, "page"), 1) - 1) * size
    offset = int_param(params.get("offset"), 0, "offset") if "offset" in params else page
    return check(MatrixQuery(
        show=params.get("show") or "all", tag=params.get("tag", ""), q=params.get("q", ""),
        regex=flag(params.get("regex"), "regex"), repeats=flag(params.get("repeats"), "repeats"),
        sort=params.get("sort") or "case", offset=max(offset, 0), per_page=size,
        grading=int_param(params.get("grading"), None, "grading"),
    ))  # fmt: skip


def matrix_rows(
    log: EventStore, view: RunView | IndexedView, query: MatrixQuery
) -> tuple[list[str], int, list[MatrixRow]]:
    """(variants, rows kept by the filters, the page's rows with their outputs read)."""
    aggregation = view.spec.scoring.replica_aggregation if view.spec else ReplicaAggregation()
    read = lambda rec: view.output(log, rec)  # noqa: E731
    found, searched = None, None
    if isinstance(view, IndexedView):
        if query.q:  # as matcher(query) compares: a pattern ignoring case, or the text lowered
            pattern = re.compile(query.q, re.IGNORECASE) if query.regex else None
            found = search_rows(view.index, query.q.lower(), pattern, reasons=True)
            found |= transcript_rows(log, view, matcher(query))
        variants, total, page = select_columns(view.table, view.trials, aggregation, query, read, found)
    else:
        searched = folded_search(log, view, matcher(query)) if query.q else None
        variants, rows = build_rows(view.trials, aggregation)
        total, page = select(variants, rows, query, read, view.trials.case_order, searched)
    holds = repeats_kept(query, trial_hit(query, read, found, searched) if query.q else None)
    if holds is not None:  # the cells show the repeats that match the search and the filter
        land(page, holds, read)
    return variants, total, every_repeat(page, read) if query.repeats else page


def cell_json(c: MatrixCell) -> dict[str, object]:
    return {
        "passes": c.passes, "scored": c.scored, "errors": c.errors, "repeats": c.repeats,
        "verdict": c.verdict,
        "grading_errors": c.grading_errors, "unscored": c.unscored, "error_class": c.error_class,
        "label": c.word, "matching_repeats": None if c.matches is None else [n + 1 for n in c.matches],
        "shown_repeat": None if c.shown is None else c.shown + 1,
        "score": c.mean("score"), "latency_ms": c.mean("latency_ms"), "cost_usd": c.mean("cost_usd"),
        "output": None if c.output is None else c.output[:OUTPUT_CHARS],
    }  # fmt: skip


def matrix(log: EventStore, view: RunView | IndexedView, query: MatrixQuery) -> dict[str, object]:
    variants, total, page = matrix_rows(log, view, query)
    return {
        "run_id": view.trials.run_id, "variants": variants, "total": total, "offset": query.offset,
        "limit": query.per_page,
        "rows": [
            {"case": r.case, "tags": r.tags, "differs": r.differs(),
             **({} if r.repeat is None else {"repeat": r.repeat + 1}),
             "cells": {v: cell_json(c) for v, c in r.cells.items()}}
            for r in page
        ],
    }  # fmt: skip
