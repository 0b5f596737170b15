"""Converting raw data that holds target and grader specs, whatever package declared their kinds.

msgspec's tagged unions are fixed when a type is first used, and they hold engine's own kinds. A
spec of another kind (an installed package's) is taken out of the raw data before msgspec converts
the rest, converted with its own Struct, and put back in its place: a stored spec keeps its kind's
Struct and an error in it still names its field from the top (`graders[2].threshold`). Reading a
log (`lenient`), a kind installed no longer reads as a placeholder of that name, never as damage.
"""

from __future__ import annotations

import functools
import types
import typing
from collections.abc import Mapping
from typing import Any

import msgspec

from engine.events.graders import GRADERS, GraderSpec
from engine.events.kind_registry import KindRegistry
from engine.events.targets import TARGETS, TargetSpec

Path = tuple[str | int, ...]
Taken = list[tuple[Path, Any]]
_STAND_INS = {id(GRADERS): {"kind": "exact"}, id(TARGETS): {"kind": "local"}}


def convert_kinded(raw: Any, type_: Any, *, strict: bool = True, lenient: bool = False) -> Any:
    """msgspec.convert(raw, type_), specs of every registered kind included (see the module)."""
    raw, taken = _take(raw, type_, lenient, "$")
    converted = msgspec.convert(raw, type_, strict=strict)
    for path, spec in taken:
        converted = _put(converted, path, spec)
    return converted


def kind_names(type_: Any) -> list[str]:
    """Every registered kind of a spec union (installed packages' included), else []."""
    registry = _registry(type_)
    return registry.names() if registry is not None else []


def _registry(type_: Any) -> KindRegistry[Any] | None:
    if type_ == GraderSpec:
        return GRADERS
    return TARGETS if type_ == TargetSpec else None


def _take(raw: Any, type_: Any, lenient: bool, where: str) -> tuple[Any, Taken]:
    registry = _registry(type_)
    if registry is not None:
        return _take_spec(raw, registry, lenient, where)
    if not _holds_kinds(type_):
        return raw, []
    origin = typing.get_origin(type_)
    if origin is list and isinstance(raw, list):
        (item,) = typing.get_args(type_)
        return _take_items(raw, item, lenient, where)
    if origin in (typing.Union, types.UnionType):
        member = _member(typing.get_args(type_), raw)
        return _take(raw, member, lenient, where) if member is not None else (raw, [])
    if isinstance(raw, dict) and isinstance(type_, type) and issubclass(type_, msgspec.Struct):
        return _take_fields(raw, type_, lenient, where)
    return raw, []


def _take_items(raw: list[Any], item: Any, lenient: bool, where: str) -> tuple[Any, Taken]:
    out, taken = list(raw), []
    for i, value in enumerate(raw):
        out[i], inner = _take(value, item, lenient, f"{where}[{i}]")
        taken += [((i, *path), spec) for path, spec in inner]
    return out, taken


def _take_fields(raw: dict[str, Any], type_: type, lenient: bool, where: str) -> tuple[Any, Taken]:
    out, taken, hints = dict(raw), [], _hints(type_)
    for name, value in raw.items():
        if name in hints:
            out[name], inner = _take(value, hints[name], lenient, f"{where}.{name}")
            taken += [((name, *path), spec) for path, spec in inner]
    return out, taken


def _take_spec(raw: Any, registry: KindRegistry[Any], lenient: bool, where: str) -> tuple[Any, Taken]:
    kind = raw.get("kind") if isinstance(raw, dict) else None
    if not isinstance(kind, str) or kind in registry.builtins:
        return raw, []
    found = registry.get(kind)
    if found is None and not lenient:  # left in place: msgspec names the field and engine the choices
        return raw, []
    struct = found.spec if found is not None else registry.placeholder(kind, raw)
    try:
        spec = msgspec.convert(raw, struct)
    except msgspec.ValidationError as exc:
        raise msgspec.ValidationError(_at(str(exc), where)) from None
    return _STAND_INS[id(registry)], [((), spec)]


def _at(message: str, where: str) -> str:
    """msgspec's message about a part, told from the top ('- at `$.x`' -> '- at `$.graders[2].x`')."""
    if " - at `$" in message:
        return message.replace(" - at `$", f" - at `{where}", 1)
    return f"{message} - at `{where}`"


def _put(obj: Any, path: Path, spec: Any) -> Any:
    if not path:
        return spec
    head, rest = path[0], path[1:]
    if isinstance(head, int):
        items = list(obj)
        items[head] = _put(items[head], rest, spec)
        return items
    return msgspec.structs.replace(obj, **{head: _put(getattr(obj, head), rest, spec)})


def _member(members: tuple[Any, ...], raw: Any) -> Any:
    """The member of a union the raw value is: by its tag among Structs, else the one not None."""
    structs = [m for m in members if isinstance(m, type) and issubclass(m, msgspec.Struct)]
    if isinstance(raw, dict) and structs and structs[0].__struct_config__.tag_field:
        field = structs[0].__struct_config__.tag_field
        return next((m for m in structs if m.__struct_config__.tag == raw.get(field)), None)
    others = [m for m in members if m is not type(None)]
    return others[0] if len(others) == 1 else None


@functools.cache
def _hints(type_: type) -> dict[str, Any]:
    return typing.get_type_hints(type_)


def _holds_kinds(type_: Any) -> bool:
    """Whether a value of the type may hold a target or grader spec (walked once per type)."""
    try:
        return _holds(type_, 0)
    except TypeError:  # not a type (a Literal's values)
        return False


@functools.cache
def _holds(type_: Any, depth: int) -> bool:
    if _registry(type_) is not None:
        return True
    if depth > 6 or typing.get_origin(type_) is typing.Literal:
        return False
    if isinstance(type_, type) and issubclass(type_, msgspec.Struct):
        return any(_holds_kinds_at(hint, depth + 1) for hint in _hints(type_).values())
    return any(_holds_kinds_at(arg, depth + 1) for arg in typing.get_args(type_))


def _holds_kinds_at(type_: Any, depth: int) -> bool:
    try:
        return _holds(type_, depth)
    except TypeError:
        return False


def grader_spec(**fields: Any) -> GraderSpec:
    """A grader spec from its fields, `kind` included, checked like a file's."""
    return convert_kinded(fields, GraderSpec)  # type: ignore[no-any-return]


def override_target(default: TargetSpec, fields: Mapping[str, Any]) -> TargetSpec:
    """The default target with some fields replaced (a variant's `target` table, a judge's settings).
    Switching `kind` keeps only the default's fields the new kind has (its model, timeout...)."""
    base = msgspec.to_builtins(default)
    kind = fields.get("kind", base["kind"])
    if isinstance(kind, str) and kind != base["kind"]:  # not a string: the conversion below names it
        found = TARGETS.get(kind)
        allowed = set(found.spec.__struct_fields__ if found is not None else ())
        base = {name: value for name, value in base.items() if name in allowed}
    return convert_kinded({**base, **fields}, TargetSpec)  # type: ignore[no-any-return]
