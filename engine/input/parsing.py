"""Reading input files and naming what is wrong in them: shared by every input module.

Files are TOML, YAML, or Markdown with YAML front matter; msgspec's validation messages become
(field path, what was expected) so every error names the file, the field and the expectation.
"""

from __future__ import annotations

import re
import tomllib
import types
import typing
from pathlib import Path
from typing import Any

import yaml

from engine.errors import InputError

_MSGSPEC_PATH = re.compile(r"^(?P<what>.*?)(?: - at `(?P<path>[^`]*)`)?$", re.S)
MAX_FILE_BYTES = 10 << 20


EXPERIMENT_FILE = "an experiment file: .toml, .yaml or .experiment.md"


def parse_file(file: Path, what: str = EXPERIMENT_FILE) -> dict[str, Any]:
    name = str(file)
    if not file.is_file():
        raise InputError(name, "", f"file not found (expected {what})")
    if file.stat().st_size > MAX_FILE_BYTES:
        raise InputError(name, "", f"file larger than {MAX_FILE_BYTES >> 20} MiB")
    text = file.read_text(encoding="utf-8")
    if file.suffix.lower() in (".yaml", ".yml"):
        data = _parse_yaml(text, name)
    elif file.suffix.lower() == ".md":
        data = _parse_markdown(text, name)
    else:
        data = _parse_toml(text, name)
    if not isinstance(data, dict):
        raise InputError(name, "", "expected a table/mapping at the top level")
    return data


def _parse_markdown(text: str, name: str) -> Any:
    """`*.experiment.md` (seed 001): YAML front matter between `---` lines; the body documents it."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise InputError(name, "", "expected YAML front matter opening with a '---' line")
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None:
        raise InputError(name, "", "expected a closing '---' line after the front matter")
    data = _parse_yaml("\n".join(lines[1:end]), name)
    body = "\n".join(lines[end + 1 :]).strip()
    if isinstance(data, dict) and body:
        data.setdefault("description", body)
    return data


def _parse_toml(text: str, name: str) -> Any:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(name, "", f"invalid TOML: {exc}") from None


def _parse_yaml(text: str, name: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise InputError(name, "", f"invalid YAML: {exc}".replace("\n", " ")) from None


def allowed_values(root: type, path: str) -> list[Any]:
    """The Literal choices of the field at a dotted path like 'graders[0].kind', if any."""
    current: Any = root
    for part in re.sub(r"\[\d+\]", "", path).split("."):
        hints = typing.get_type_hints(current) if isinstance(current, type) else {}
        current = _unwrap(hints.get(part))
        if current is None:
            return []
    return list(typing.get_args(current)) if typing.get_origin(current) is typing.Literal else []


def _unwrap(annotation: Any) -> Any:
    """list[X] -> X, X | None -> X."""
    for _ in range(3):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if typing.get_origin(annotation) in (list, types.UnionType, typing.Union) and len(args) == 1:
            annotation = args[0]
    return annotation


def split_validation_error(message: str) -> tuple[str, str]:
    """Split msgspec's 'Expected `int`, got `str` - at `$.budget.max_trials`' into (path, what)."""
    match = _MSGSPEC_PATH.match(message)
    assert match is not None
    path = (match.group("path") or "$").removeprefix("$").lstrip(".")
    what = match.group("what").replace("`", "")
    what = what[0].lower() + what[1:] if what else what
    return path or "(top level)", what
