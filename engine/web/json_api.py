"""The JSON API: runs, one run's report, its trials and matrix, comparisons. The pages use it too.

Every handler reads the log in a worker thread (LMDB reads block), never writes it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import anyio
import msgspec
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from engine.errors import InputError, NotFoundError
from engine.presentation.status_words import badge_class
from engine.runtime.run_status import process_alive, with_trial_count
from engine.store.kept.snapshots import SUMMARIES, load, run_ids
from engine.store.kept.unpacked import unpacked_once
from engine.views.history import run_outcome
from engine.web.context import WebContext
from engine.web.data import RunView
from engine.web.matrix_view import PARAMS, matrix, query_of
from engine.web.progress import progress
from engine.web.query_params import accepts, choice, int_param
from engine.web.trials_api import STATUSES, TrialFilter, check_names, trials_page


def json_response(data: object) -> Response:
    return Response(msgspec.json.encode(data), media_type="application/json")


async def in_thread(request: Request, work: Callable[[WebContext], Any]) -> Any:
    ctx: WebContext = request.app.state.ctx

    def read() -> Any:
        with unpacked_once():  # a state a page reads whole and then checks the head of: decompressed once
            return work(ctx)

    return await anyio.to_thread.run_sync(read)


async def in_view(request: Request, run_id: str, read: Callable[[WebContext, RunView], Any]) -> Any:
    """read(ctx, view) of a known run, in a worker thread."""
    return await in_thread(request, lambda ctx: ctx.views.use(_known(ctx, run_id), lambda v: read(ctx, v)))


async def in_index(request: Request, run_id: str, read: Callable[[WebContext, Any], Any]) -> Any:
    """read(ctx, view) of a known run from its kept trial index (RunViews.indexed), in a worker thread."""
    return await in_thread(
        request, lambda ctx: ctx.views.indexed(_known(ctx, run_id), lambda v: read(ctx, v))
    )


def error_response(exc: Exception) -> JSONResponse:
    status = 404 if isinstance(exc, NotFoundError) else 400
    return JSONResponse({"error": str(exc)}, status_code=status)


def runs_json(ctx: WebContext) -> list[dict[str, object]]:
    """Every run's summary and pass rate (scanned once per state of the log); whether a "running"
    run's process is still alive is asked each time: a killed run appends nothing."""
    rows = ctx.memo(("runs",), lambda: [_run_row(ctx, rid) for rid in run_ids(ctx.log)])
    return [
        {**row, "status": "interrupted", "outcome": "interrupted", "status_class": badge_class("interrupted")}
        if row["status"] == "running" and not process_alive(row["pid"], row["host"])  # type: ignore[arg-type]
        else row
        for row in rows
    ]


def _run_row(ctx: WebContext, run_id: str) -> dict[str, object]:
    # a tuning session's trials run, a created run's planned: as `engine list` counts them
    summary = with_trial_count(ctx.log, load(ctx.log, SUMMARIES, run_id))
    word = run_outcome(ctx.log, run_id, summary.status)
    return {**msgspec.to_builtins(summary), "pass_rate": ctx.pass_rate(summary.run_id), "outcome": word,
            "status_class": badge_class(word)}  # fmt: skip


@accepts()
async def runs(request: Request) -> Response:
    return json_response(await in_thread(request, runs_json))


@accepts("grading")
async def run_report(request: Request) -> Response:
    run_id = request.path_params["run_id"]
    grading = int_param(request.query_params.get("grading"), None, "grading")
    data = await in_thread(request, lambda ctx: ctx.report(_known(ctx, run_id), grading))
    return Response(data, media_type="application/json")


@accepts()
async def run_progress(request: Request) -> Response:
    run_id = request.path_params["run_id"]
    data = await in_view(request, run_id, lambda ctx, v: progress(v, time.time()))
    return json_response(data)


def _known(ctx: WebContext, run_id: str) -> str:
    if run_id not in run_ids(ctx.log):  # from the snapshots: the log's own list walks its index
        raise NotFoundError(f"no run {run_id!r} in this store")
    return run_id


def trial_filter(request: Request) -> TrialFilter:
    q = request.query_params
    text = {name: q.get(name, "") for name in ("variant", "case", "tag", "q")}
    return TrialFilter(
        **text, status=choice(q.get("status"), STATUSES, "status"),
        limit=int_param(q.get("limit"), 50, "limit"), offset=int_param(q.get("offset"), 0, "offset"),
    )  # fmt: skip


@accepts("variant", "case", "status", "tag", "q", "limit", "offset")
async def run_trials(request: Request) -> Response:
    run_id, f = request.path_params["run_id"], trial_filter(request)
    data = await in_index(request, run_id, lambda ctx, v: (check_names(v, f), trials_page(ctx.log, v, f))[1])
    return json_response(data)


@accepts(*PARAMS)
async def run_matrix(request: Request) -> Response:
    run_id, query = request.path_params["run_id"], query_of(request.query_params, per_page=100)
    read = lambda ctx: ctx.at_round(_known(ctx, run_id), query.grading, lambda v: matrix(ctx.log, v, query))  # noqa: E731
    data = await in_thread(request, read)
    return json_response(data)


def comparison_json(ctx: WebContext, base: str, cand: str) -> dict[str, object]:
    """The comparison from the runs' kept states, kept per (base, candidate, each run's position)."""
    base_id, cand_id = _known(ctx, base), _known(ctx, cand)  # exact ids: a prefix is not a run
    return ctx.comparisons.get(base_id, cand_id)[0]


@accepts("base", "cand")
async def compare(request: Request) -> Response:
    base, cand = request.query_params.get("base", ""), request.query_params.get("cand", "")
    if not base or not cand:
        raise InputError("query", "base/cand", "expected two run ids: /api/compare?base=RUN&cand=RUN")
    return json_response(await in_thread(request, lambda ctx: comparison_json(ctx, base, cand)))
