"""The matrix view as a download (CSV or JSON): every row the page's filters, search and sort keep
(not only the page shown), one line per case and variant with its whole first output; after a text
search, one line per repeat that matched (its own output), and with `repeats=1` one per repeat."""

from __future__ import annotations

import csv
import dataclasses
import io

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from engine.presentation.matrix_repeats import trial_cell
from engine.web.json_api import in_index
from engine.web.matrix_view import PARAMS, cell_json, matrix_rows, query_of
from engine.web.query_params import accepts

COLUMNS = ["case", "tags", "variant", "repeat", "verdict", "label", "passes", "scored", "repeats", "errors",
           "grading_errors", "error_class", "score", "latency_ms", "cost_usd", "output"]  # fmt: skip
ALL_ROWS = 10**9  # the download holds every kept row: pages are for reading, not for exporting


async def _records(request: Request) -> tuple[str, list[dict[str, object]]]:
    run_id = request.path_params["run_id"]
    query = dataclasses.replace(query_of(request.query_params), offset=0, per_page=ALL_ROWS)

    def read(ctx, view) -> list[dict[str, object]]:  # noqa: ANN001
        variants, _total, rows = matrix_rows(ctx.log, view, dataclasses.replace(query, repeats=False))
        output = lambda rec: view.output(ctx.log, rec)  # noqa: E731
        lines = []
        for r in rows:
            by_trial = any(c.matches for c in r.cells.values())  # else the case's own texts matched
            for v in variants:
                if (c := r.cells.get(v)) is None or (by_trial and not c.matches):
                    continue
                head = {"case": r.case, "tags": r.tags, "variant": v}
                if c.matches:  # the repeats that hold the search, each with its own output
                    trials = [x for x in c.records if x.repeat in c.matches]
                elif query.repeats:
                    trials = list(c.records)
                else:
                    lines.append(head | {"repeat": None} | cell_json(c) | {"output": c.output})
                    continue
                for rec in trials:
                    one = trial_cell(v, rec, output, c.matches)
                    lines.append(head | {"repeat": rec.repeat + 1} | cell_json(one) | {"output": one.output})
        return lines

    return run_id, await in_index(request, run_id, read)


@accepts(*PARAMS)
async def matrix_csv(request: Request) -> Response:
    run_id, records = await _records(request)
    out = io.StringIO()
    writer = csv.DictWriter(out, COLUMNS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for rec in records:
        writer.writerow(rec | {"tags": " ".join(rec["tags"])})  # type: ignore[arg-type]
    return _download(out.getvalue(), "text/csv; charset=utf-8", f"{run_id}-matrix.csv")


@accepts(*PARAMS)
async def matrix_json(request: Request) -> Response:
    import msgspec

    run_id, records = await _records(request)
    body = msgspec.json.encode({"run_id": run_id, "cells": records}).decode()
    return _download(body, "application/json", f"{run_id}-matrix.json")


def _download(body: str, media_type: str, name: str) -> Response:
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)
    return Response(
        body, media_type=media_type, headers={"content-disposition": f'attachment; filename="{safe}"'}
    )


ROUTES = [
    Route("/api/runs/{run_id}/matrix.csv", matrix_csv),
    Route("/api/runs/{run_id}/matrix.json", matrix_json),
]
