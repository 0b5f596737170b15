"""`engine.serve_app(store)`: the web view as a Starlette ASGI app, mountable in a host app.

It only reads the log: given a path it opens the store read-only, so it runs beside the processes
that run, cancel or resume experiments on the same store.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from engine.errors import UserError
from engine.presentation.templates import stylesheet
from engine.store.contract import EventStore
from engine.web import json_api, label_pages, labelling, matrix_export, pages, sse
from engine.web.auth import TokenGate, check_token
from engine.web.context import WebContext
from engine.web.host_guard import HostGate, SecureHeaders

STATIC = Path(__file__).parent / "static"


def open_read_only(path: str | os.PathLike[str]) -> EventStore:
    from engine.store.open import open_event_log

    _must_exist(path)
    return open_event_log(path, readonly=True)


def _must_exist(path: str | os.PathLike[str]) -> None:
    from engine.errors import NotFoundError

    if not (Path(path) / "data.mdb").exists():
        raise NotFoundError(f"no store at {path} (run an experiment first, or pass --store)")


def open_writable(path: str | os.PathLike[str]) -> EventStore:
    """The store for a view that labels: its runs may go on beside it (appends are small, one at a time)."""
    from engine.store.open import open_event_log

    _must_exist(path)
    return open_event_log(path)


async def report_css(request: Request) -> Response:
    return Response(stylesheet(), media_type="text/css")  # report.css and the status colours


async def user_error(request: Request, exc: Exception) -> Response:
    if request.url.path.startswith(f"{request.scope.get('root_path', '')}/api/"):
        return json_api.error_response(exc)
    return pages.error_page(request, exc)


def serve_app(
    store: EventStore | str | os.PathLike[str],
    token: str | None = None,
    allowed_hosts: Iterable[str] | None = None,
    labels: bool = True,
) -> SecureHeaders:
    """The web view of `store` (a store object, or a store directory opened read-only). With a token
    (16 characters or more), every request must carry it (`Authorization: Bearer T`, `?token=T` once,
    then a cookie), and people may label outputs (`labels`): the directory is then opened for that one
    kind of write. With allowed_hosts, only requests whose Host header names one are answered (a host
    app that mounts the view checks its own Host headers). Every response carries the view's
    Content-Security-Policy, nosniff and no-framing headers."""
    if token is not None:
        check_token(token)
    writes = token is not None and labels
    if hasattr(store, "read_run"):
        log = store
    else:
        log = open_writable(store) if writes else open_read_only(store)  # type: ignore[arg-type]
    routes = [
        Route("/api/runs", json_api.runs),
        Route("/api/runs/{run_id}", json_api.run_report),
        Route("/api/runs/{run_id}/progress", json_api.run_progress),
        Route("/api/runs/{run_id}/trials", json_api.run_trials),
        *matrix_export.ROUTES,  # before /api/runs/{run_id}/matrix: `.csv` is not a run's sub-path
        Route("/api/runs/{run_id}/matrix", json_api.run_matrix),
        Route("/api/runs/{run_id}/events", sse.run_events),
        Route("/api/compare", json_api.compare),
        *labelling.API_ROUTES,
        *pages.ROUTES,
        *label_pages.PAGE_ROUTES,
        Route("/static/report.css", report_css),  # the report's own styles, shared with the HTML file
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(routes=routes, exception_handlers={UserError: user_error})
    can_label = writes and not getattr(log, "readonly", False)
    app.state.ctx = WebContext(log, token, can_label)  # type: ignore[arg-type]
    gated = TokenGate(app, token)
    return SecureHeaders(gated if allowed_hosts is None else HostGate(gated, frozenset(allowed_hosts)))
