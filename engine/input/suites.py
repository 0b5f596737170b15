"""Case suites kept in their own file: .jsonl, .toml, .yaml/.yml or .csv.

`select` keeps cases whose id matches any glob; `tags` keeps cases carrying any
of the tags. Errors name the suite file and the line or item.
"""

from __future__ import annotations

import csv
import fnmatch
import io
import tomllib
from pathlib import Path
from typing import Any

import msgspec

from engine.errors import InputError
from engine.events.spec import CaseSpec, SuiteSpec
from engine.input import compact_cases
from engine.input.compat.assertions import check_case_graders, warn_unrun
from engine.input.compat.case_records import case_record, with_stable_ids
from engine.input.jsonl_cases import jsonl_records
from engine.input.parsing import read_text, split_validation_error


def load_suite(
    base_dir: Path, suite: SuiteSpec, experiment_file: str, field: str = "suite"
) -> list[CaseSpec]:
    """The selected cases of the suite file(s) `suite.path` names (a glob: every match, sorted)."""
    paths = _suite_files(base_dir, suite.path, experiment_file, field)
    plain = not field.startswith("suites[")  # AgentV's suite list rewrites its records (below)
    records = [(path, where, record) for path in paths for where, record in _read_records(path, plain)]
    if field.startswith("suites["):  # AgentV's suite list: a .jsonl dataset is a suite as an eval file is
        records = [(p, w, _in_suite(r, p.name.split(".")[0]) if p.suffix.lower() == ".jsonl" else r)
                   for p, w, r in records]  # fmt: skip
    named = with_stable_ids([r if isinstance(r, CaseSpec) else case_record(r) for _, _, r in records])
    for path in paths:
        warn_unrun([record for p, _, record in records if p == path], str(path))
    for (path, where, _), record in zip(records, named, strict=True):
        check_case_graders(record, str(path), where)
    return _converted(records, named, suite)


def _converted(records: list[tuple[Path, str, Any]], named: list[Any], suite: SuiteSpec) -> list[CaseSpec]:
    """The selected cases, converted and, for a big suite, decoded afresh a chunk at a time while the
    records are held (engine.input.compact_cases): never all the converted cases beside their copies."""
    compact, chunk = len(named) >= compact_cases.COMPACT_FROM, compact_cases.CHUNK
    cases: list[CaseSpec] = []
    for start in range(0, len(named), chunk):
        places, part = records[start : start + chunk], named[start : start + chunk]
        pairs = zip(places, part, strict=True)
        converted = [_to_case(record, str(path), where) for (path, where, _), record in pairs]
        selected = [case for case in converted if _selected(case, suite)]
        parsed = compact and not all(isinstance(record, CaseSpec) for record in part)  # else read as cases
        fresh = compact_cases.decoded_afresh(selected) if parsed else None
        cases += selected if fresh is None else fresh
    return cases


def _suite_files(base_dir: Path, pattern: str, experiment_file: str, field: str) -> list[Path]:
    if not any(char in pattern for char in "*?["):
        path = (base_dir / pattern).resolve()
        if not path.is_file():
            raise InputError(experiment_file, f"{field}.path", f"suite file {pattern!r} not found")
        return [path]
    found = sorted(path.resolve() for path in base_dir.glob(pattern) if path.is_file())
    if not found:
        raise InputError(experiment_file, f"{field}.path", f"no suite file matches {pattern!r}")
    return found


def _selected(case: CaseSpec, suite: SuiteSpec) -> bool:
    if suite.select and not any(fnmatch.fnmatchcase(case.id, glob) for glob in suite.select):
        return False
    return not suite.tags or any(tag in case.tags for tag in suite.tags)


def _read_records(path: Path, typed: bool = False) -> list[tuple[str, Any]]:
    """`typed`: a JSONL line that is a plain case is read as one (engine.input.jsonl_cases)."""
    name = str(path)
    text = read_text(path)
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        return jsonl_records(text, name, typed)
    if suffix == ".csv":
        return _csv(text)
    if suffix == ".toml":
        try:
            data: Any = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise InputError(name, "", f"invalid TOML: {exc}") from None
    elif suffix in (".yaml", ".yml"):
        import yaml  # paid by YAML suites only

        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise InputError(name, "", f"invalid YAML: {exc}".replace("\n", " ")) from None
    else:
        raise InputError(name, "", "expected a suite file ending in .jsonl, .toml, .yaml, .yml or .csv")
    # AgentV's .eval.yaml keeps its cases under tests[]
    items = data.get("cases", data.get("tests")) if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise InputError(name, "cases", "expected a list of cases")
    if isinstance(data, dict) and "tests" in data and "cases" not in data:
        items = [_in_suite(item, suite_name(path, data)) for item in items]
    return [(f"cases[{i}]", item) for i, item in enumerate(items)]


def suite_name(path: Path, data: dict[str, Any]) -> str:
    """An eval file's `name`, else its file name without `.eval.yaml`: the rundir export's suite folder."""
    given = data.get("name")
    return given if isinstance(given, str) and given else path.name.split(".")[0]


def _in_suite(item: Any, suite: str) -> Any:
    if not isinstance(item, dict):
        return item
    metadata = item.get("metadata", {})
    return {**item, "metadata": {"suite": suite, **metadata}} if isinstance(metadata, dict) else item


def _csv(text: str) -> list[tuple[str, Any]]:
    out = []
    for number, row in enumerate(csv.DictReader(io.StringIO(text)), start=2):
        record: dict[str, Any] = {k: v for k, v in row.items() if k and v not in (None, "")}
        if "tags" in record:
            record["tags"] = [t.strip() for t in record["tags"].split(";") if t.strip()]
        out.append((f"line {number}", record))
    return out


def _to_case(record: Any, file: str, where: str) -> CaseSpec:
    if isinstance(record, CaseSpec):  # read as a case already (engine.input.jsonl_cases)
        return record
    try:
        return msgspec.convert(record, CaseSpec, strict=True)
    except msgspec.ValidationError as exc:
        field, expected = split_validation_error(str(exc))
        raise InputError(file, f"{where}.{field}" if field != "(top level)" else where, expected) from None
