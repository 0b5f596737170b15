"""Helpers every source tool's shape rewriting shares: moving a value to engine's field, checking tables."""

from __future__ import annotations

from typing import Any

from engine.errors import InputError


def move(out: dict[str, Any], path: tuple[str, ...], value: Any, file: str, field: str) -> None:
    """Set out[path...] = value, refusing when the file also sets it the engine way."""
    *tables, key = path
    target = out
    for name in tables:
        table = dict(table_of(target.get(name, {}), file, name))
        target[name] = table
        target = table
    if key in target:
        raise InputError(file, field, f"not together with `{'.'.join(path)}`: use one of them")
    target[key] = value


def table_of(value: Any, file: str, field: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InputError(file, field, "expected a table")
    return value


def list_of(value: Any, file: str, field: str) -> list[Any]:
    if not isinstance(value, list):
        raise InputError(file, field, "expected a list")
    return value
