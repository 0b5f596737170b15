"""Server-rendered pages (every value escaped); their small scripts read the JSON API."""

from __future__ import annotations

import html

from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route


def error_page(request: Request, exc: Exception) -> HTMLResponse:
    status = 404 if type(exc).__name__ == "NotFoundError" else 400
    return HTMLResponse(f"<!doctype html><title>engine</title><p>{html.escape(str(exc))}</p>", status)


ROUTES: list[Route] = []
