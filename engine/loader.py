"""Load an experiment file (TOML or YAML) into a validated ExperimentSpec.

Every problem becomes an InputError naming the file, the field path and what
was expected, so the CLI can print one line and exit 2.
"""

from __future__ import annotations

import re
import tomllib
import types
import typing
from pathlib import Path
from typing import Any

import msgspec
import yaml

from engine.compat import normalize
from engine.errors import InputError
from engine.events.spec import ExperimentSpec, GraderSpec, ScoringSpec
from engine.overrides import apply_overrides
from engine.suites import load_suite

_MSGSPEC_PATH = re.compile(r"^(?P<what>.*?)(?: - at `(?P<path>[^`]*)`)?$", re.S)
MAX_FILE_BYTES = 10 << 20


def load_experiment(path: str | Path) -> ExperimentSpec:
    """Read, parse, validate and resolve an experiment file (suite cases are inlined)."""
    file = Path(path)
    return spec_from_raw(parse_file(file), str(file), file.parent)


def spec_from_raw(raw: dict[str, Any], name: str, base_dir: Path) -> ExperimentSpec:
    """Parsed data -> a checked spec: other tools' shapes rewritten, suite files and prompt overrides
    (paths relative to base_dir) resolved. Files and embedding callers share this one path."""
    spec = convert_spec(normalize(raw, name), name)
    spec = apply_overrides(resolve_suites(spec, base_dir, name), base_dir, name)
    from engine.validate import check_spec

    check_spec(spec, name)
    return spec


def resolve_suites(spec: ExperimentSpec, base_dir: Path, name: str) -> ExperimentSpec:
    """The spec with the cases of its suite files (paths relative to base_dir) appended."""
    suites = [("suite", spec.suite)] if spec.suite is not None else []
    suites += [(f"suites[{i}]", suite) for i, suite in enumerate(spec.suites)]
    if not suites:
        return spec
    cases = [case for field, suite in suites for case in load_suite(base_dir, suite, name, field)]
    return msgspec.structs.replace(spec, cases=[*spec.cases, *cases], suite=None, suites=[])


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


def convert_spec(raw: dict[str, Any], name: str) -> ExperimentSpec:
    try:
        return msgspec.convert(raw, ExperimentSpec, strict=True)
    except msgspec.ValidationError as exc:
        field, expected = split_validation_error(str(exc))
        if expected.startswith("invalid enum value"):
            choices = allowed_values(ExperimentSpec, field)
            expected += f" (expected one of {', '.join(map(repr, choices))})" if choices else ""
        raise InputError(name, field, expected) from None


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


class _GraderFile(msgspec.Struct, kw_only=True):
    graders: list[GraderSpec]
    scoring: ScoringSpec | None = None


def load_graders(path: str | Path) -> tuple[list[GraderSpec], float | None]:
    """[[graders]] and an optional [scoring] from a file (an experiment file works too)."""
    file = Path(path)
    raw = parse_file(file, "a graders file: .toml or .yaml with [[graders]] and optional [scoring]")
    subset = {key: raw[key] for key in ("graders", "scoring") if key in raw}
    try:
        parsed = msgspec.convert(subset, _GraderFile, strict=True)
    except msgspec.ValidationError as exc:
        field, expected = split_validation_error(str(exc))
        raise InputError(str(file), field, expected) from None
    if not parsed.graders:
        raise InputError(str(file), "graders", "expected at least one [[graders]] entry")
    from engine.validate import check_graders

    check_graders(parsed.graders, str(file))
    return parsed.graders, None if parsed.scoring is None else parsed.scoring.pass_threshold
