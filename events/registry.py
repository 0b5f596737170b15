"""Kinds by name, each a 'module:attribute' imported on first use.

A report format or export format is one line in its registry next to its implementation's module:
adding one is a new file plus that line, and it costs no import time until it is used (`engine
--help` stays fast). Target and grader kinds are declared with their capabilities instead
(kind_registry).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class Registry(Generic[T]):
    def __init__(self, what: str, entries: Mapping[str, str]) -> None:
        self.what = what
        self._entries = dict(entries)
        self._loaded: dict[str, T] = {}

    def names(self) -> list[str]:
        return list(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def get(self, name: str) -> T:
        found = self._loaded.get(name)
        if found is None:
            path = self._entries.get(name)
            if path is None:
                raise KeyError(f"no {self.what} named {name!r} (known: {', '.join(self._entries)})")
            module, _, attribute = path.partition(":")
            found = self._loaded[name] = _attribute(importlib.import_module(module), attribute)
        return found


def _attribute(module: Any, name: str) -> Any:
    return getattr(module, name)
