"""Reading input files and naming what is wrong in them: shared by every input module.

Files are TOML, YAML, or Markdown with YAML front matter; msgspec's validation messages become
(field path, what was expected) so every error names the file, the field and the expectation.
"""

from __future__ import annotations

import difflib
import json
import re
import tomllib
import types
import typing
from pathlib import Path
from typing import Any

import msgspec

from engine.errors import InputError
from engine.events.kind_convert import kind_names

_MSGSPEC_PATH = re.compile(r"^(?P<what>.*?)(?: - at `(?P<path>[^`]*)`)?$", re.S)
MAX_FILE_BYTES = 10 << 20
_FIELD_FIRST = re.compile(r"^(\w+): (expected .*)$", re.S)
_MISSING_FIELD = re.compile(r"^object missing required field (\w+)$")


EXPERIMENT_FILE = "an experiment file: .toml, .yaml, .json or .experiment.md"


def parse_file(file: Path, what: str = EXPERIMENT_FILE) -> dict[str, Any]:
    name = str(file)
    if not file.is_file():
        raise InputError(name, "", f"file not found (expected {what})")
    if file.stat().st_size > MAX_FILE_BYTES:
        raise InputError(name, "", f"file larger than {MAX_FILE_BYTES >> 20} MiB")
    text = read_text(file)
    try:
        if file.suffix.lower() in (".yaml", ".yml"):
            data = parse_yaml(text, name)
        elif file.suffix.lower() == ".md":
            data = _parse_markdown(text, name)
        elif file.suffix.lower() == ".json":  # the same fields as a TOML file, in JSON
            data = _parse_json(text, name)
        else:
            data = _parse_toml(text, name)
    except RecursionError:
        raise InputError(name, "", f"expected at most {MAX_DEPTH} levels of nesting") from None
    if not isinstance(data, dict):
        raise InputError(name, "", "expected a table/mapping at the top level")
    check_shape(data, name)
    return data


MAX_DEPTH = 64


def read_text(file: Path) -> str:
    data = file.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        expected = f"expected UTF-8 text; byte {data[exc.start]:#04x} on line {line} is not"
        raise InputError(str(file), "", expected) from None


def check_shape(data: Any, name: str) -> None:
    """What no later step could survive: nesting deeper than the stack, or an integer no event can
    store (msgpack's 64 bits). Walked iteratively: the value may be deeper than the stack."""
    stack: list[tuple[Any, str, int]] = [(data, "", 1)]
    while stack:
        item, where, level = stack.pop()
        if level > MAX_DEPTH:
            raise InputError(name, "", f"expected at most {MAX_DEPTH} levels of nesting")
        if isinstance(item, int) and not isinstance(item, bool) and not -(2**63) <= item < 2**63:
            raise InputError(name, where, f"expected an integer of at most 64 bits, got {item}")
        if isinstance(item, dict):
            stack.extend((v, f"{where}.{k}" if where else str(k), level + 1) for k, v in item.items())
        elif isinstance(item, list):
            stack.extend((v, f"{where}[{i}]", level + 1) for i, v in enumerate(item))


def _parse_markdown(text: str, name: str) -> Any:
    """`*.experiment.md`: YAML front matter between `---` lines; the Markdown body documents it."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise InputError(name, "", "expected YAML front matter opening with a '---' line")
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None:
        raise InputError(name, "", "expected a closing '---' line after the front matter")
    data = parse_yaml("\n".join(lines[1:end]), name)
    body = "\n".join(lines[end + 1 :]).strip()
    if isinstance(data, dict) and body:
        data.setdefault("description", body)
    return data


def _parse_toml(text: str, name: str) -> Any:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(name, "", f"invalid TOML: {exc}") from None


def parse_yaml(text: str, name: str) -> Any:
    import yaml  # paid by YAML files only (benchmarks/README.md#in-code-start-up)

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark, problem = getattr(exc, "problem_mark", None), getattr(exc, "problem", None)
        if mark is None or problem is None:
            raise InputError(name, "", f"invalid YAML: {exc}".replace("\n", " ")) from None
        where = f"line {mark.line + 1}:{mark.column + 1}"  # line:column
        raise InputError(name, "", f"invalid YAML at {where}: {problem}") from None


def _parse_json(text: str, name: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno}:{exc.colno}"  # line:column
        raise InputError(name, "", f"invalid JSON at {where}: {exc.msg}") from None


def allowed_values(root: type, path: str) -> list[Any]:
    """The choices of the field at a dotted path like 'graders[0].kind': a Literal's values, or the
    kinds of a tagged union (one Struct per kind)."""
    current: Any = root
    for part in re.sub(r"\[\d+\]", "", path).split("."):
        members = _union_members(current)
        if members and part == members[0].__struct_config__.tag_field:
            return kind_names(current) or [m.__struct_config__.tag for m in members]
        hints = [typing.get_type_hints(m) for m in members or [current] if isinstance(m, type)]
        current = _unwrap(next((h[part] for h in hints if part in h), None))
        if current is None:
            return []
    return list(typing.get_args(current)) if typing.get_origin(current) is typing.Literal else []


def _union_members(annotation: Any) -> list[Any]:
    """The Structs of a tagged union (engine's targets and graders), else []."""
    union = typing.get_origin(annotation) in (types.UnionType, typing.Union)
    args = typing.get_args(annotation) if union else ()
    structs = [a for a in args if isinstance(a, type) and getattr(a, "__struct_config__", None) is not None]
    return structs if structs and all(s.__struct_config__.tag_field for s in structs) else []


def _unwrap(annotation: Any) -> Any:
    """list[X] -> X, X | None -> X, dict[K, V] -> V."""
    for _ in range(3):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if typing.get_origin(annotation) in (list, types.UnionType, typing.Union) and len(args) == 1:
            annotation = args[0]
        elif typing.get_origin(annotation) is dict and len(args) == 2:
            annotation = args[1]
    return annotation


def split_validation_error(message: str) -> tuple[str, str]:
    """Split msgspec's 'Expected `int`, got `str` - at `$.budget.max_trials`' into (path, what)."""
    match = _MSGSPEC_PATH.match(message)
    assert match is not None
    path = (match.group("path") or "$").removeprefix("$").lstrip(".")
    # "expected float | null, got str": an optional field's None is not news to the reader
    what = match.group("what").replace("`", "").replace(" | null", "")
    what = what[0].lower() + what[1:] if what else what
    # a cross-field rule (a Struct's __post_init__) names its field first: "pattern: expected ..."
    field = _FIELD_FIRST.match(what)
    if field is not None:
        path, what = f"{path}.{field.group(1)}".lstrip("."), field.group(2)
    missing = _MISSING_FIELD.match(what)
    if missing is not None:
        path, what = f"{path}.{missing.group(1)}".lstrip("."), "expected a value: this field is required"
    return path or "(top level)", what


def field_hint(root: type, path: str) -> str:
    """The `Meta(description=...)` of the field at a dotted path: what a range means to a user."""
    current: Any = root
    annotation: Any = None
    for part in re.sub(r"\[\d+\]", "", path).split("."):
        members = _union_members(current) or [current]
        hints = [typing.get_type_hints(m, include_extras=True) for m in members if isinstance(m, type)]
        annotation = next((h[part] for h in hints if part in h), None)
        if annotation is None:
            return ""
        current = _unwrap(_plain(annotation))
    metas = [m for a in [annotation, *typing.get_args(annotation)] for m in _metas(a)]
    return next((m.description for m in metas if m.description), "")


def known_fields(root: type, path: str) -> list[str]:
    """The field names (as a file spells them) of the table at a dotted path like 'variants[0]'; of
    every kind, for a kinded table (a target, a grader)."""
    current: Any = root
    for part in [] if path == "(top level)" else re.sub(r"\[\d+\]", "", path).split("."):
        members = _union_members(current) or [current]
        hints = [typing.get_type_hints(m, include_extras=True) for m in members if isinstance(m, type)]
        annotation = next((h[part] for h in hints if part in h), None)
        if annotation is None:
            return []
        current = _unwrap(_plain(annotation))
    members = _union_members(current) or [current]
    structs = [m for m in members if isinstance(m, type) and hasattr(m, "__struct_fields__")]
    return sorted({f.encode_name for m in structs for f in msgspec.structs.fields(m)})


def unknown_field(root: type, path: str, what: str) -> tuple[str, str] | None:
    """msgspec's "object contains unknown field X" as (the table's path, what to say), with the
    closest known name when one is close ("did you mean 'repeat'?")."""
    found = _UNKNOWN_FIELD.match(what)
    if found is None:
        return None
    name = found.group(1)
    # a kinded table knows every kind's fields: a field of another kind is no typo of one of them
    known = [f for f in known_fields(root, path) if f != name]
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return path, f"unknown field {name}" + (f": did you mean {close[0]!r}?" if close else "")


_UNKNOWN_FIELD = re.compile(r"object contains unknown field (\S+)$")


def _metas(annotation: Any) -> list[msgspec.Meta]:
    if typing.get_origin(annotation) is not typing.Annotated:
        return []
    return [a for a in typing.get_args(annotation)[1:] if isinstance(a, msgspec.Meta)]


def _plain(annotation: Any) -> Any:
    """Annotated[X, ...] -> X, also inside X | None."""
    if typing.get_origin(annotation) is typing.Annotated:
        return typing.get_args(annotation)[0]
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) in (types.UnionType, typing.Union) and any(_metas(a) for a in args):
        return typing.Union[tuple(_plain(a) for a in args)]  # noqa: UP007 - rebuilt from parts
    return annotation
