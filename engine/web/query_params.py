"""Numbers read from a page's or the API's query string: one clear error for a bad one."""

from __future__ import annotations

from typing import Any

from engine.errors import InputError


def int_param(text: str | None, default: Any) -> Any:
    """A non-negative integer, or `default` when the parameter is absent or empty."""
    if text is None or text == "":
        return default
    try:
        value = int(text)
    except ValueError:
        raise InputError("query", "limit/offset/grading", f"expected an integer, got {text!r}") from None
    if value < 0:
        raise InputError("query", "limit/offset/grading", f"expected a non-negative integer, got {value}")
    return value
