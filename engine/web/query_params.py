"""Values read from a page's or the API's query string: one clear error (a 400 naming what is
accepted) for a bad one, never a silent default. Every API route names the parameters it reads
(`accepts`): a misspelled one (`?staus=pass`) is refused, not ignored."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Collection
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from engine.errors import InputError

ALWAYS = ("token",)  # the view's token, on any address (auth.py)
Handler = Callable[[Request], Awaitable[Response]]


def int_param(text: str | None, default: Any, name: str = "limit/offset/grading") -> Any:
    """A non-negative integer, or `default` when the parameter is absent or empty."""
    if text is None or text == "":
        return default
    try:
        value = int(text)
    except ValueError:
        raise InputError("query", name, f"expected an integer, got {text!r}") from None
    if value < 0:
        raise InputError("query", name, f"expected a non-negative integer, got {value}")
    return value


def choice(text: str | None, choices: Collection[str], name: str, default: str = "") -> str:
    """One of `choices` (or `default` when absent or empty); anything else names the choices."""
    if text is None or text == "":
        return default
    if text not in choices:
        raise InputError("query", name, f"expected one of {', '.join(sorted(choices))}, got {text!r}")
    return text


def flag(text: str | None, name: str) -> bool:
    """A checkbox's value: 1 (or on, true) is set; absent, empty or 0 is not."""
    return choice(text, ("0", "1", "on", "true", "false"), name, "0") in ("1", "on", "true")


def accepts(*names: str) -> Callable[[Handler], Handler]:
    """The route reads only these parameters: an unknown one is a 400 that names them."""
    known = frozenset(names) | frozenset(ALWAYS)

    def wrap(handler: Handler) -> Handler:
        @functools.wraps(handler)
        async def checked(request: Request) -> Response:
            unknown = sorted(set(request.query_params.keys()) - known)
            if unknown:
                accepted = ", ".join(sorted(names)) if names else "no parameters"
                raise InputError("query", unknown[0], f"unknown parameter (this address takes {accepted})")
            return await handler(request)

        return checked

    return wrap
