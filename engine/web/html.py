"""HTML building blocks for the pages: every value goes through `e()` (model output is untrusted)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape
from urllib.parse import quote, urlencode

from starlette.requests import Request


def e(value: object) -> str:
    """Escaped text, quotes too (values also land in attributes)."""
    return escape("" if value is None else str(value), quote=True)


def q(value: str) -> str:
    """A path segment (run ids, experiment names)."""
    return quote(value, safe="")


def href(path: str, **params: object) -> str:
    kept = {k: v for k, v in params.items() if v not in (None, "")}
    return e(path + ("?" + urlencode(kept) if kept else ""))


def run_url(root: str, run_id: str, tail: str = "") -> str:
    return f"{root}/runs/{q(run_id)}{tail}"


def badge(status: str) -> str:
    return f'<span class="badge {e(status)}">{e(status)}</span>'


def num(value: object, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}g}" if abs(value) < 1000 else f"{value:,.0f}"
    return e(value)


def pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def table(header: Sequence[str], rows: Iterable[Sequence[str]], cls: str = "") -> str:
    """Cells are HTML already (escape values with e() before); the header is escaped here."""
    head = "".join(f"<th>{e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="{e(cls)}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def page(request: Request, title: str, body: str, script: str = "") -> str:
    root = request.scope.get("root_path", "")
    js = f'<script src="{e(root)}/static/app.js" defer></script>' if script else ""
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{e(title)} · engine</title>"
        f'<link rel="stylesheet" href="{e(root)}/static/style.css">{js}</head>'
        f'<body data-root="{e(root)}" data-page="{e(script)}"><header><nav>'
        f'<a class="brand" href="{e(root)}/">engine</a><a href="{e(root)}/">Runs</a>'
        f'<a href="{e(root)}/compare">Compare</a></nav></header><main>{body}</main></body></html>'
    )
