"""Deterministic graders: exact, contains, regex, json, forbidden."""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec

from engine.actors.graders.grader_protocol import SpecGrader, Submission, expected_text, result
from engine.events.graders import ExitCodeGraderSpec, ForbiddenGraderSpec, RegexGraderSpec
from engine.events.kinds import GraderResult
from engine.events.spec import CaseSpec


class _Sync(SpecGrader):
    """A grader that needs no I/O: check() runs inline."""

    async def grade(self, submission: Submission) -> GraderResult:
        return self.check(submission.case, submission.output)

    def check(self, case: CaseSpec, output: str) -> GraderResult:
        raise NotImplementedError

    def _fold(self, text: str) -> str:
        return text if self.spec.case_sensitive else text.casefold()


class ExactGrader(_Sync):
    def check(self, case: CaseSpec, output: str) -> GraderResult:
        want = expected_text(self.spec, case)
        if want is None:
            return result(self.spec, None, False, "no expected value")
        ok = self._fold(output.strip()) == self._fold(want.strip())
        return result(self.spec, float(ok), ok, "" if ok else f"expected exactly {want!r}")


class ContainsGrader(_Sync):
    """Every expected string must appear (a list in `expected` means all of them)."""

    def check(self, case: CaseSpec, output: str) -> GraderResult:
        wanted = self._wanted(case)
        if not wanted:
            return result(self.spec, None, False, "no expected value")
        text = self._fold(output)
        missing = [w for w in wanted if self._fold(w) not in text]
        score = 1.0 - len(missing) / len(wanted)
        return result(self.spec, score, not missing, f"missing {missing!r}" if missing else "")

    def _wanted(self, case: CaseSpec) -> list[str]:
        if self.spec.value is None and isinstance(case.expected, list):
            return [str(w) for w in case.expected]
        want = expected_text(self.spec, case)
        return [] if want is None else [want]


class RegexGrader(_Sync):
    def __init__(self, spec: RegexGraderSpec) -> None:
        super().__init__(spec)
        flags = 0 if spec.case_sensitive else re.IGNORECASE
        self._pattern = re.compile(spec.pattern, flags | re.DOTALL)

    def check(self, case: CaseSpec, output: str) -> GraderResult:
        ok = self._pattern.search(output) is not None
        return result(self.spec, float(ok), ok, "" if ok else f"no match for /{self._pattern.pattern}/")


class ForbiddenGrader(_Sync):
    """A forbidden rule: the trial fails if the output contains `value` or matches `pattern`.

    It is a gate and carries no weight: a violation fails the trial whatever its score,
    and a clean output does not raise the score.
    """

    def __init__(self, spec: ForbiddenGraderSpec) -> None:
        super().__init__(msgspec.structs.replace(spec, gate=True, weight=0.0))
        flags = 0 if spec.case_sensitive else re.IGNORECASE
        self._pattern = re.compile(spec.pattern, flags | re.DOTALL) if spec.pattern else None

    def check(self, case: CaseSpec, output: str) -> GraderResult:
        hits = []
        if self.spec.value is not None and self._fold(self.spec.value) in self._fold(output):
            hits.append(repr(self.spec.value))
        if self._pattern is not None and self._pattern.search(output):
            hits.append(f"/{self._pattern.pattern}/")
        ok = not hits
        reason = "" if ok else f"forbidden: {' and '.join(hits)} found"
        return result(self.spec, float(ok), ok, reason, veto=not ok)


class ExitCodeGrader(_Sync):
    """The agent's exit code must be one of `exit_codes` (default 0). With this grader a non-zero
    exit is graded like any other result instead of being recorded as an agent_exit error."""

    def __init__(self, spec: ExitCodeGraderSpec) -> None:
        super().__init__(spec)
        self._allowed = set(spec.exit_codes or [0])

    async def grade(self, submission: Submission) -> GraderResult:
        code = submission.exit_code
        if code is None:
            return result(self.spec, None, False, "no exit code (not a command target)")
        ok = code in self._allowed
        return result(self.spec, float(ok), ok, "" if ok else f"exit code {code}")


class JsonGrader(_Sync):
    """The output (or the first JSON object in it) must parse, match `fields` and the schema subset."""

    def check(self, case: CaseSpec, output: str) -> GraderResult:
        value = extract_json(output)
        if value is _MISSING:
            return result(self.spec, 0.0, False, "output is not JSON")
        fields = self.spec.fields or (case.expected if isinstance(case.expected, dict) else {})
        problems = [
            f"{path}: expected {want!r}" for path, want in fields.items() if lookup(value, path) != want
        ]
        if self.spec.schema is not None:
            problems += schema_problems(value, self.spec.schema, "$")
        checks = max(1, len(fields) + (1 if self.spec.schema is not None else 0))
        score = max(0.0, 1.0 - len(problems) / checks)
        return result(self.spec, score, not problems, "; ".join(problems[:5]))


_MISSING = object()


def extract_json(text: str) -> Any:
    """The output's JSON value, or the first one inside it; _MISSING when there is none. A value
    Python will not build (an integer past its digit limit, nesting past the recursion limit) is none."""
    try:
        return json.loads(text)
    except (json.JSONDecodeError, ValueError, RecursionError):
        pass
    decoder = json.JSONDecoder()
    for start, char in enumerate(text):
        if char in "{[":
            try:
                return decoder.raw_decode(text[start:])[0]
            except (json.JSONDecodeError, ValueError, RecursionError):
                continue
    return _MISSING


def lookup(value: Any, path: str) -> Any:
    for part in path.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return _MISSING
    return value


_TYPES = {
    "object": dict,
    "array": list,
    "string": str,
    "number": (int, float),
    "integer": int,
    "boolean": bool,
}


def schema_problems(value: Any, schema: dict[str, Any], where: str) -> list[str]:
    """A small JSON Schema subset: type, required, properties, items, enum."""
    want = schema.get("type")
    if (
        want in _TYPES
        and not isinstance(value, _TYPES[want])
        or (want != "boolean" and isinstance(value, bool) and want in ("number", "integer"))
    ):
        return [f"{where}: expected {want}"]
    problems = []
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{where}: expected one of {schema['enum']!r}")
    if isinstance(value, dict):
        problems += [f"{where}.{key}: required" for key in schema.get("required", []) if key not in value]
        for key, sub in schema.get("properties", {}).items():
            if key in value:
                problems += schema_problems(value[key], sub, f"{where}.{key}")
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            problems += schema_problems(item, schema["items"], f"{where}[{i}]")
    return problems
