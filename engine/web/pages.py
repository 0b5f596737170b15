"""Server-rendered pages (every value escaped); the run page's script reads the SSE API to stay live.

URLs name what they show (/runs/R, /runs/R/matrix?show=failing, /runs/R/trial?case=C&variant=V),
so a link can be shared.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from engine.errors import NotFoundError
from engine.presentation.matrix import LEGEND, MatrixRow
from engine.presentation.matrix_query import SHOWS, pages
from engine.presentation.matrix_repeats import excerpt_start, marked, pattern_of
from engine.presentation.templates import render
from engine.store.kept.snapshots import SUMMARIES, load
from engine.web.context import WebContext
from engine.web.html import page, q
from engine.web.json_api import _known, in_thread, runs_json
from engine.web.matrix_view import matrix_rows, query_of
from engine.web.pages_more import compare_body, history_body, trial_body, tuning_body
from engine.web.progress import last_of_run
from engine.web.query_params import int_param
from engine.web.run_page import run_body, run_fragment
from engine.web.templated import body as templated

Body = Callable[[WebContext], tuple[str, str]]


def error_page(request: Request, exc: Exception) -> HTMLResponse:
    """A 404 (unknown run, case or experiment) or 400 page that says what was not found and links back."""
    status = 404 if isinstance(exc, NotFoundError) else 400
    title = "Not found" if status == 404 else "Bad request"
    body = templated("error_page.html", title=title, error=str(exc), root=_root(request))
    return HTMLResponse(page(request, title, body, "keys"), status)


async def render_page(request: Request, body: Body, script: str = "") -> HTMLResponse:
    title, html = await in_thread(request, body)
    return HTMLResponse(page(request, title, html, script))


def _root(request: Request) -> str:
    return request.scope.get("root_path", "")


async def runs_page(request: Request) -> HTMLResponse:
    root = _root(request)

    def body(ctx: WebContext) -> tuple[str, str]:
        from engine.web.starter import starter_command

        runs = list(reversed(runs_json(ctx)))
        live = int(any(r["status"] == "running" for r in runs))
        starter = "" if runs else starter_command(ctx.log)
        return "Runs", templated("runs_page.html", runs=runs, live=live, starter=starter, root=root)

    return await render_page(request, body, "runs")


def _grading(request: Request) -> int | None:
    return int_param(request.query_params.get("grading"), None, "grading")


async def run_page(request: Request) -> HTMLResponse:
    run_id, grading = request.path_params["run_id"], _grading(request)
    return await render_page(
        request, lambda ctx: run_body(ctx, _known(ctx, run_id), _root(request), grading), "run"
    )


async def run_live(request: Request) -> HTMLResponse:
    """The run page's figures alone, for its script to swap in while the run is live."""
    run_id, grading = request.path_params["run_id"], _grading(request)
    html = await in_thread(
        request, lambda ctx: run_fragment(ctx, _known(ctx, run_id), _root(request), grading)
    )
    return HTMLResponse(html, headers={"Cache-Control": "no-cache"})


SORTS = [("case", "case"), ("score", "score, lowest first"), ("-score", "score, highest first"),
         ("-latency", "latency, slowest first"), ("latency", "latency, fastest first"),
         ("-cost", "cost, highest first"), ("cost", "cost, lowest first"),
         ("ttft", "time to first token, fastest first"),
         ("-ttft", "time to first token, slowest first")]  # fmt: skip


async def matrix_page(request: Request) -> HTMLResponse:
    run_id, root = request.path_params["run_id"], _root(request)
    query = query_of(request.query_params)
    base = f"{root}/runs/{q(run_id)}"
    pattern = pattern_of(query)
    marks = (lambda text: marked(text, pattern)) if pattern else None  # noqa: E731
    start = (lambda text, clip: excerpt_start(text, pattern, clip)) if pattern else None  # noqa: E731

    def link(case: str, variant: str | None, repeat: int | None = None) -> str:
        """A cell's trial page: with the search (highlighted there), at the repeat the cell shows."""
        found = {"q": query.q} | ({"regex": "1"} if query.regex else {}) if query.q else {}
        at = f"#repeat-{variant}-{repeat + 1}" if variant and repeat is not None else ""
        params = {"case": case} | ({"variant": variant} if variant else {}) | found
        return base + "/trial?" + urlencode(params) + at

    def url(**changed: object) -> str:
        return base + "/matrix?" + urlencode(query.params(**changed))

    def export_url(kind: str) -> str:  # the same filters, search and sort: every kept row, not a page
        return f"{root}/api/runs/{q(run_id)}/matrix.{kind}?" + urlencode(query.params(page=1))

    def body(ctx: WebContext) -> tuple[str, str]:
        def read(v: Any) -> tuple[tuple[list[str], int, list[MatrixRow]], int, list[tuple[int, str]]]:
            return matrix_rows(ctx.log, v, query), v.trials.grading, sorted(v.rounds.items())

        seq = last_of_run(ctx.log, _known(ctx, run_id))  # before the rows: they cover at least this
        (variants, total, rows), grading, rounds = ctx.at_round(run_id, query.grading, read)
        if query.grading is not None:  # an earlier round's view: the rounds are the latest view's
            rounds = ctx.views.indexed(run_id, lambda v: sorted(v.rounds.items()))
        html = render(
            "matrix_page.html", run_id=run_id, run_url=base, query=query, shows=SHOWS, sorts=SORTS,
            total=total, pages=pages(total, query.per_page), legend_items=LEGEND, variants=variants,
            rows=rows, link=link, url=url, export_url=export_url, grading=grading, rounds=rounds,
            grading_name=dict(rounds).get(grading, "original"), marks=marks, start=start,
            repeats_url=url(repeats=not query.repeats, page=1), seq=seq,
            live=load(ctx.log, SUMMARIES, run_id).status == "running",
        )  # fmt: skip
        return f"matrix {run_id}", html

    return await render_page(request, body, "matrix")


async def trial_page(request: Request) -> HTMLResponse:
    run_id, params = request.path_params["run_id"], request.query_params
    case, variant = params.get("case", ""), params.get("variant", "")
    root, search = _root(request), query_of({k: params[k] for k in ("q", "regex") if k in params})
    return await render_page(
        request, lambda ctx: trial_body(ctx, _known(ctx, run_id), case, variant, root, search), "trial"
    )


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
    Route("/runs/{run_id}/live", run_live),
    Route("/runs/{run_id}/matrix", matrix_page),
    Route("/runs/{run_id}/trial", trial_page),
    Route("/runs/{run_id}/tuning", tuning_page),
    Route("/compare", compare_page),
    Route("/history/{experiment}", history_page),
]
