"""Load an experiment file (TOML or YAML) into a validated ExperimentSpec.

Every problem becomes an InputError naming the file, the field path and what
was expected, so the CLI can print one line and exit 2.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from engine.errors import InputError, InputWarning
from engine.events.graders import GRADERS
from engine.events.kind_convert import convert_kinded
from engine.events.spec import ExperimentSpec, GraderSpec, ScoringSpec, grader_spec
from engine.input.compact_cases import compacted
from engine.input.compat import normalize
from engine.input.experiment_plan import ExperimentPlan, resolve
from engine.input.overrides import apply_overrides
from engine.input.parsing import (
    allowed_values,
    check_shape,
    field_hint,
    parse_file,
    split_validation_error,
    unknown_field,
)
from engine.input.suites import load_suite
from engine.input.validate import check_declared, check_plan


def load_experiment(path: str | Path) -> ExperimentSpec:
    """Read, parse, validate and resolve an experiment file (suite cases are inlined)."""
    return load_plan(path).spec


def load_plan(path: str | Path) -> ExperimentPlan:
    """An experiment file read, checked and resolved into the plan a run and its checks share."""
    file = Path(path)
    return plan_from_raw(parse_file(file), str(file), file.parent, str(file.resolve()))


def spec_from_raw(raw: dict[str, Any], name: str, base_dir: Path) -> ExperimentSpec:
    return plan_from_raw(raw, name, base_dir).spec


def plan_from_raw(raw: dict[str, Any], name: str, base_dir: Path, source: str = "") -> ExperimentPlan:
    """Parsed data -> a checked plan: other tools' shapes rewritten, suite files and prompt overrides
    (paths relative to base_dir) resolved. Files and embedding callers share this one path. `source`
    is the file's absolute path; the plan's folder is that file's (base_dir itself for a dict)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", InputWarning)
        check_shape(raw, name)
        spec = convert_spec(default_target_kind(normalize(raw, name, base_dir)), name)
        spec = compacted(spec)  # while `raw` is still held (engine.input.compact_cases); suites' in theirs
        spec = apply_overrides(resolve_suites(spec, base_dir, name), base_dir, name)
        spec = with_case_graders(spec)
        check_declared(spec, name)
        plan = resolve(spec, name, Path(source).parent if source else base_dir, source)
        check_plan(plan)
    for warning in caught:  # still said where the caller hears warnings (the CLI's stderr)
        warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    said = tuple(str(w.message) for w in caught if issubclass(w.category, InputWarning))
    return msgspec.structs.replace(plan, warnings=said) if said else plan


def default_target_kind(raw: dict[str, Any]) -> dict[str, Any]:
    """A [target] table without `kind` is the embedded local model, as an absent [target] is."""
    target = raw.get("target")
    if isinstance(target, dict) and "kind" not in target:
        return {**raw, "target": {"kind": "local", **target}}
    return raw


def with_case_graders(spec: ExperimentSpec) -> ExperimentSpec:
    """Cases carrying their own graders (AgentV assertions) get them run: a `case` grader, a gate
    (a failed assertion fails the trial), unless the file already has one."""
    if any(GRADERS.of(g).runs_case_graders for g in spec.graders):
        return spec
    if not any(c.criteria.get("graders") for c in spec.cases):
        return spec
    # with no grader of the file's own scoring, the case grader also checks the expected answer (the
    # default check, which a contains grader beside it would only average with the assertions)
    alone = all(GRADERS.of(g).veto_only for g in spec.graders)
    own = grader_spec(kind="case", name="assertions", gate=True, expected=alone)
    return msgspec.structs.replace(spec, graders=[*spec.graders, own])


def resolve_suites(spec: ExperimentSpec, base_dir: Path, name: str) -> ExperimentSpec:
    """The spec with the cases of its suite files (paths relative to base_dir) appended."""
    suites = [("suite", spec.suite)] if spec.suite is not None else []
    suites += [(f"suites[{i}]", suite) for i, suite in enumerate(spec.suites)]
    if not suites:
        return spec
    cases = [case for field, suite in suites for case in load_suite(base_dir, suite, name, field)]
    return msgspec.structs.replace(spec, cases=[*spec.cases, *cases], suite=None, suites=[])


T = TypeVar("T")


def convert_spec(raw: dict[str, Any], name: str) -> ExperimentSpec:
    return convert_checked(raw, ExperimentSpec, name)


def convert_checked(raw: dict[str, Any], kind: type[T], name: str) -> T:
    """msgspec's conversion, its complaint told as the file, the field and what was expected (the
    valid choices of a field that has a few)."""
    try:
        return convert_kinded(raw, kind, strict=True)  # type: ignore[no-any-return]
    except msgspec.ValidationError as exc:
        field, expected = split_validation_error(str(exc))
        unknown = unknown_field(kind, field, expected)
        if unknown is not None:
            raise InputError(name, *unknown) from None
        if expected.startswith(("invalid enum value", "invalid value")):
            choices = allowed_values(kind, field)
            got = expected.partition(" value ")[2]
            expected = f"expected one of {', '.join(map(str, choices))} (got {got})" if choices else expected
        hint = field_hint(kind, field)
        raise InputError(name, field, f"{expected} ({hint})" if hint else expected) from None


class _GraderFile(msgspec.Struct, kw_only=True):
    graders: list[GraderSpec]
    scoring: ScoringSpec | None = None


def load_graders(path: str | Path) -> tuple[list[GraderSpec], float | None]:
    """[[graders]] and an optional [scoring] from a file (an experiment file works too)."""
    file = Path(path)
    raw = parse_file(file, "a graders file: .toml or .yaml with [[graders]] and optional [scoring]")
    subset = {key: raw[key] for key in ("graders", "scoring") if key in raw}
    parsed = convert_checked(subset, _GraderFile, str(file))
    if not parsed.graders:
        raise InputError(str(file), "graders", "expected at least one [[graders]] entry")
    return parsed.graders, None if parsed.scoring is None else parsed.scoring.pass_threshold
