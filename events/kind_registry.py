"""Target and grader kinds, each declared once: its spec Struct (whose tag is the kind's name), its
implementation ('module:attribute', imported on first use) and what it can do, in one declaration.

Engine's own kinds are listed in events.targets and events.graders; the tagged unions of the
experiment file are made from those lists. Other kinds come from installed packages through the
entry point groups `engine.targets` and `engine.graders` (each entry point names a declaration),
read the first time a kind engine does not ship is looked up, so `import engine` and `engine --help`
never scan the installed packages. A kind named by a stored log but installed no longer reads as a
placeholder of that name (every field it had kept), so the log replays; it cannot be run.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar, Union

import msgspec

from engine.events.plugin_loader import Offered, load_reference, offered
from engine.events.spec_base import Kinded

_WARNED: set[tuple[str, str]] = set()  # (group, entry point) said once per process, rescans included


# a Struct, not a dataclass: a dataclass compiles its methods from source at import (exec), and every
# command imports the kinds, `engine list` too (benchmarks/README.md#read-commands-after-one-parser-issue-38)
class Kind(msgspec.Struct, frozen=True):
    spec: type[Kinded]  # the spec Struct; its tag is the kind's name
    impl: str = ""  # 'module:attribute' of the implementation ("" for a kind no longer installed)
    # the fields of a small valid spec (kind excepted): the contract suite builds one from it;
    # "{url}" in a text is replaced by the address of a server that never answers
    example: Mapping[str, Any] = msgspec.field(default_factory=dict)

    @property
    def name(self) -> str:
        return str(self.spec.__struct_config__.tag)

    @property
    def installed(self) -> bool:
        return bool(self.impl)

    def implementation(self) -> Any:
        if not self.impl:
            raise LookupError(f"the {self.name!r} kind is not installed")
        return load_reference(self.impl)


K = TypeVar("K", bound=Kind)
Missing = Callable[[type[Kinded]], K]  # the declaration of a kind installed no longer


class KindRegistry(Generic[K]):
    """Kinds by name: engine's own, then the entry point group's (loaded once, on first need)."""

    def __init__(
        self, what: str, group: str, base: type[Kinded], builtins: list[K], missing: Missing[K]
    ) -> None:
        self.what, self.group, self.base, self._missing = what, group, base, missing
        self.builtins: dict[str, K] = {k.name: k for k in builtins}
        self._added: dict[str, K] = {}
        self._plugins: dict[str, K] | None = None
        self._placeholders: dict[tuple[str, tuple[str, ...]], type[Kinded]] = {}

    def union(self) -> Any:
        """The tagged union of engine's own spec Structs (what the fast decoders are built for)."""
        return Union[tuple(k.spec for k in self.builtins.values())]  # noqa: UP007 - built from a list

    def get(self, name: str) -> K | None:
        found = self.builtins.get(name) or self._added.get(name)
        return found if found is not None else self.plugins().get(name)

    def names(self) -> list[str]:
        return list({**self.builtins, **self.plugins(), **self._added})

    def of(self, spec: Kinded) -> K:
        """A spec's declaration; a kind installed no longer has one that can do nothing."""
        found = self.get(spec.kind)
        return found if found is not None and isinstance(spec, found.spec) else self._missing(type(spec))

    def register(self, kind: K) -> None:
        """Add a kind in this process (an embedding application, a test); a name is taken once."""
        if self.get(kind.name) is not None:
            raise ValueError(f"a {self.what} named {kind.name!r} is already registered")
        if not issubclass(kind.spec, self.base):
            raise TypeError(f"a {self.what}'s spec must subclass {self.base.__name__}")
        self._added[kind.name] = kind

    def unregister(self, name: str) -> None:
        """Take back a kind `register` added (a test's, an embedding application's)."""
        self._added.pop(name, None)

    def plugins(self) -> dict[str, K]:
        if self._plugins is None:
            self._plugins = {}
            for point in offered(self.group):
                kind = self._load(point)
                if kind is not None and kind.name not in self.builtins:
                    self._plugins.setdefault(kind.name, kind)
        return self._plugins

    def rescan(self) -> None:
        """Read the entry points again (a package installed or removed while the process runs)."""
        self._plugins = None

    def _load(self, point: Offered) -> K | None:
        try:
            kind = point.load()
        except Exception as exc:  # a broken package must not stop the others (nor a replay)
            warnings.warn(f"{self.group} entry point {point.name!r} did not load: {exc}", stacklevel=3)
            return None
        if not isinstance(kind, Kind) or not issubclass(kind.spec, self.base):
            what = f"{self.group} entry point {point.name!r} is not a {self.what} declaration"
            warnings.warn(what, stacklevel=3)
            return None
        if point.name != kind.name and (self.group, point.name) not in _WARNED:
            _WARNED.add((self.group, point.name))  # the file says `kind = "<tag>"`: the name misleads
            warnings.warn(
                f"{self.group} entry point {point.name!r} ({point.origin}) declares the kind {kind.name!r}; "
                f"experiment files name it {kind.name!r}",
                stacklevel=3,
            )
        return kind  # type: ignore[return-value]

    def placeholder(self, name: str, fields: dict[str, Any]) -> type[Kinded]:
        """A Struct for a kind installed no longer, keeping the fields a stored spec of it has."""
        own = tuple(sorted(f for f in fields if f != "kind" and f not in self.base.__struct_fields__))
        found = self._placeholders.get((name, own))
        if found is None:
            fields_ = [(f, Any) for f in own]
            found = msgspec.defstruct(
                f"Missing_{name}", fields_, bases=(self.base,), tag=name, module=__name__, kw_only=True
            )
            self._placeholders[(name, own)] = found
        return found
