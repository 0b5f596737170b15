"""The one loader of what other packages add: the entry points of a group, and 'module:attribute'
references imported on first use. Kinds (events.kind_registry) and formats (presentation.formats)
both come through here.

Entry points are listed only when something asks (the first kind engine does not ship, the first
format looked up), so `import engine` and `engine --help` never scan the installed packages.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

import msgspec


class Offered(msgspec.Struct, frozen=True):  # not a dataclass: see events.kind_registry.Kind
    """One entry point: its name, its 'module:attribute' reference and the package that offers it."""

    name: str
    reference: str
    origin: str

    def load(self) -> Any:
        return load_reference(self.reference)


def offered(group: str) -> Iterator[Offered]:
    """The entry points of `group`, not loaded."""
    from importlib.metadata import entry_points  # its import reads much of the standard library

    for point in entry_points(group=group):
        origin = point.dist.name if point.dist is not None else "an entry point"
        yield Offered(point.name, point.value, origin)


def load_reference(reference: str) -> Any:
    """The object a 'module:attribute' (or 'module:attribute.inner') reference names, imported now."""
    module, _, attribute = reference.partition(":")
    found: Any = importlib.import_module(module)
    for part in attribute.split(".") if attribute else ():
        found = getattr(found, part)
    return found
