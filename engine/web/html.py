"""HTML building blocks for the pages: every value goes through `e()` (model output is untrusted)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape
from urllib.parse import quote

from starlette.requests import Request


def e(value: object) -> str:
    """Escaped text, quotes too (values also land in attributes)."""
    return escape("" if value is None else str(value), quote=True)


def q(value: str) -> str:
    """A path segment (run ids, experiment names)."""
    return quote(value, safe="")


def run_url(root: str, run_id: str, tail: str = "") -> str:
    return f"{root}/runs/{q(run_id)}{tail}"


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
    # in a scrolling box: a wide table scrolls by itself, never the page (phones are 390 px wide)
    inner = f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody>"
    return f'<div class="scroll"><table class="{e(cls)}">{inner}</table></div>'


def page(request: Request, title: str, body: str, script: str = "") -> str:
    """The layout (the shared page template) around `body`, HTML already escaped by its builder."""
    from markupsafe import Markup

    from engine.presentation.templates import render

    root = request.scope.get("root_path", "")
    return render("page.html", title=title, body=Markup(body), script=script, root=root)
