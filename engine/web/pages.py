"""Server-rendered pages (every value escaped); the run page's script reads the SSE API to stay live.

URLs name what they show (/runs/R, /runs/R/matrix?show=failing, /runs/R/trial?case=C&variant=V),
so a link can be shared.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable

from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from engine.errors import NotFoundError
from engine.web.context import WebContext
from engine.web.html import e, href, page, pct, q, table
from engine.web.json_api import _int, _known, in_thread, runs_json
from engine.web.matrix import matrix
from engine.web.pages_more import compare_body, history_body, trial_body, tuning_body
from engine.web.run_page import run_body

Body = Callable[[WebContext], tuple[str, str]]


def error_page(request: Request, exc: Exception) -> HTMLResponse:
    status = 404 if isinstance(exc, NotFoundError) else 400
    return HTMLResponse(page(request, "error", f'<p class="warn">{e(exc)}</p>'), status)


async def render(request: Request, body: Body, script: str = "") -> HTMLResponse:
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

    return await render(request, body, "runs")


async def run_page(request: Request) -> HTMLResponse:
    run_id = request.path_params["run_id"]
    return await render(request, lambda ctx: run_body(ctx, _known(ctx, run_id), _root(request)), "run")


SHOWS = ("all", "failing", "flaky", "regressed")


async def matrix_page(request: Request) -> HTMLResponse:
    run_id, params = request.path_params["run_id"], request.query_params
    show, tag, text = params.get("show", "all"), params.get("tag", ""), params.get("q", "")
    offset = _int(params.get("offset"), 0)
    base = f"{_root(request)}/runs/{q(run_id)}"

    def body(ctx: WebContext) -> tuple[str, str]:
        m = ctx.views.use(_known(ctx, run_id), lambda v: matrix(v, show, tag, text, 100, offset))
        variants: list[str] = m["variants"]  # type: ignore[assignment]
        rows = []
        for row in m["rows"]:  # type: ignore[attr-defined]
            cells = [
                f'<a href="{href(base + "/trial", case=row["case"])}">{e(row["case"])}</a>'
                + "".join(f'<span class="tag">{e(t)}</span>' for t in row["tags"])
            ]
            for v in variants:
                c = row["cells"].get(v)
                label = "-" if c is None else f"{c['passes']}/{c['repeats']}"
                verdict = "pending" if c is None else c["verdict"]
                link = href(base + "/trial", case=row["case"], variant=v)
                cells.append(
                    f'<a class="cell {e(verdict)}" href="{link}" title="{e(verdict)}">{e(label)}</a>'
                )
            rows.append(cells)
        options = "".join(f"<option{' selected' * (s == show)}>{s}</option>" for s in SHOWS)
        form = (
            f'<form class="filters" method="get"><label>show <select name="show">{options}</select></label>'
            f'<label>tag <input name="tag" value="{e(tag)}"></label>'
            f'<label>case <input name="q" value="{e(text)}" placeholder="text in the case id"></label>'
            f"<button>Filter</button></form>"
        )
        more = ""
        if offset + 100 < m["total"]:  # type: ignore[operator]
            nxt = href(base + "/matrix", show=show, tag=tag, q=text, offset=offset + 100)
            more = f'<p><a href="{nxt}">next 100</a></p>'
        head = f'<h1>Matrix <a href="{href(base)}"><code>{e(run_id)}</code></a></h1>'
        count = f'<p class="meta">{m["total"]} cases · passes/repeats, coloured by verdict</p>'
        return f"matrix {run_id}", head + form + count + table(["case", *variants], rows, "matrix") + more

    return await render(request, body)


async def trial_page(request: Request) -> HTMLResponse:
    run_id, params = request.path_params["run_id"], request.query_params
    case, variant = params.get("case", ""), params.get("variant", "")
    root = _root(request)
    return await render(request, lambda ctx: trial_body(ctx, _known(ctx, run_id), case, variant, root))


async def compare_page(request: Request) -> HTMLResponse:
    base, cand = request.query_params.get("base", ""), request.query_params.get("cand", "")
    return await render(request, lambda ctx: compare_body(ctx, base, cand, _root(request)))


async def tuning_page(request: Request) -> HTMLResponse:
    run_id = request.path_params["run_id"]
    return await render(request, lambda ctx: tuning_body(ctx, _known(ctx, run_id), _root(request)))


async def history_page(request: Request) -> HTMLResponse:
    name = request.path_params["experiment"]
    return await render(request, lambda ctx: history_body(ctx, name, _root(request)))


ROUTES = [
    Route("/", runs_page),
    Route("/runs/{run_id}", run_page),
    Route("/runs/{run_id}/matrix", matrix_page),
    Route("/runs/{run_id}/trial", trial_page),
    Route("/runs/{run_id}/tuning", tuning_page),
    Route("/compare", compare_page),
    Route("/history/{experiment}", history_page),
]
