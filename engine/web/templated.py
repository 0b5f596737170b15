"""A web page body from its template, with the formatting helpers every page template calls."""

from __future__ import annotations

import datetime
from urllib.parse import urlencode

from markupsafe import Markup

from engine.presentation.templates import render
from engine.web.html import num, pct, q


def when(ts: float) -> str:
    return datetime.datetime.fromtimestamp(ts, datetime.UTC).strftime("%Y-%m-%d %H:%M UTC") if ts else "-"


def number(value: object, digits: int = 3) -> Markup:
    return Markup(num(value, digits))  # num escapes what is not a number already


def link(path: str, **params: object) -> str:
    """A link with its query; empty values left out (the template escapes it)."""
    kept = {k: v for k, v in params.items() if v not in (None, "")}
    return path + ("?" + urlencode(kept) if kept else "")


HELPERS = {"q": q, "pct": pct, "num": number, "when": when, "link": link}


def body(name: str, **context: object) -> str:
    return render(name, **HELPERS, **context)
