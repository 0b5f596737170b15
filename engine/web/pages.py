"""Server-rendered pages (every value escaped); the run page's script reads the SSE API to stay live.

URLs name what they show (/runs/R, /runs/R/matrix?show=failing, /runs/R/trial?case=C&variant=V),
so a link can be shared.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from engine.errors import NotFoundError
from engine.presentation.matrix import LEGEND
from engine.presentation.matrix_query import SHOWS, pages
from engine.presentation.templates import render
from engine.web.context import WebContext
from engine.web.html import e, href, page, pct, q, table
from engine.web.json_api import _known, in_thread, runs_json
from engine.web.matrix_view import matrix_rows, query_of
from engine.web.pages_more import compare_body, history_body, trial_body, tuning_body
from engine.web.run_page import run_body

Body = Callable[[WebContext], tuple[str, str]]


def error_page(request: Request, exc: Exception) -> HTMLResponse:
    status = 404 if isinstance(exc, NotFoundError) else 400
    return HTMLResponse(page(request, "error", f'<p class="warn">{e(exc)}</p>'), status)


async def render_page(request: Request, body: Body, script: str = "") -> HTMLResponse:
    title, html = await in_thread(request, body)
    return HTMLResponse(page(request, title, html, script))


def _root(request: Request) -> str:
    return request.scope.get("root_path", "")


def when(ts: float) -> str:
    return datetime.datetime.fromtimestamp(ts, datetime.UTC).strftime("%Y-%m-%d %H:%M UTC") if ts else "-"


async def runs_page(request: Request) -> HTMLResponse:
    root = _root(request)

    def body(ctx: WebContext) -> tuple[str, str]:
        rows = [
            [
                f'<a href="{href(root + "/runs/" + q(r["run_id"]))}">{e(r["run_id"])}</a>',
                f'<a href="{href(root + "/history/" + q(r["experiment"]))}">{e(r["experiment"])}</a>',
                f'<span class="badge {e(r["status"])}">{e(r["status"])}</span>',
                e(r["trials_total"]),
                pct(r["pass_rate"]),
                when(r["started_ts"]),
                e(r["origin"]),
            ]
            for r in reversed(runs_json(ctx))
        ]
        header = ["run", "experiment", "status", "trials", "pass rate", "started", "origin"]
        running = any('class="badge running"' in row[2] for row in rows)
        return "Runs", f'<h1>Runs</h1><div id="runs" data-live="{int(running)}">{table(header, rows)}</div>'

    return await render_page(request, body, "runs")


async def run_page(request: Request) -> HTMLResponse:
    run_id = request.path_params["run_id"]
    return await render_page(request, lambda ctx: run_body(ctx, _known(ctx, run_id), _root(request)), "run")


SORTS = [("case", "case"), ("score", "score, lowest first"), ("-score", "score, highest first"),
         ("-latency", "latency, slowest first"), ("latency", "latency, fastest first"),
         ("-cost", "cost, highest first"), ("cost", "cost, lowest first")]  # fmt: skip


async def matrix_page(request: Request) -> HTMLResponse:
    run_id, root = request.path_params["run_id"], _root(request)
    query = query_of(request.query_params)
    base = f"{root}/runs/{q(run_id)}"

    def link(case: str, variant: str | None) -> str:
        return base + "/trial?" + urlencode({"case": case} | ({"variant": variant} if variant else {}))

    def url(**changed: object) -> str:
        return base + "/matrix?" + urlencode(query.params(**changed))

    def body(ctx: WebContext) -> tuple[str, str]:
        variants, total, rows = ctx.views.use(_known(ctx, run_id), lambda v: matrix_rows(ctx.log, v, query))
        grading, name = ctx.views.use(run_id, lambda v: (v.state.grading, v.state.grading_name or "original"))
        html = render(
            "matrix_page.html", run_id=run_id, run_url=base, query=query, shows=SHOWS, sorts=SORTS,
            total=total, pages=pages(total, query.per_page), legend_items=LEGEND, variants=variants,
            rows=rows, link=link, url=url, grading=grading, grading_name=name,
        )  # fmt: skip
        return f"matrix {run_id}", html

    return await render_page(request, body)


async def trial_page(request: Request) -> HTMLResponse:
    run_id, params = request.path_params["run_id"], request.query_params
    case, variant = params.get("case", ""), params.get("variant", "")
    root = _root(request)
    return await render_page(request, lambda ctx: trial_body(ctx, _known(ctx, run_id), case, variant, root))


async def compare_page(request: Request) -> HTMLResponse:
    base, cand = request.query_params.get("base", ""), request.query_params.get("cand", "")
    return await render_page(request, lambda ctx: compare_body(ctx, base, cand, _root(request)))


async def tuning_page(request: Request) -> HTMLResponse:
    run_id = request.path_params["run_id"]
    return await render_page(request, lambda ctx: tuning_body(ctx, _known(ctx, run_id), _root(request)))


async def history_page(request: Request) -> HTMLResponse:
    name = request.path_params["experiment"]
    return await render_page(request, lambda ctx: history_body(ctx, name, _root(request)))


ROUTES = [
    Route("/", runs_page),
    Route("/runs/{run_id}", run_page),
    Route("/runs/{run_id}/matrix", matrix_page),
    Route("/runs/{run_id}/trial", trial_page),
    Route("/runs/{run_id}/tuning", tuning_page),
    Route("/compare", compare_page),
    Route("/history/{experiment}", history_page),
]
