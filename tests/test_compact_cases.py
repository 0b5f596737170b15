"""A big plan's cases are decoded afresh while loading (engine.input.compact_cases): the plan reads
exactly as the converted one, and a case a round trip would change keeps the plan as converted."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import pytest

from engine.input import compact_cases
from engine.input.loader import load_plan
from engine.input.shared_cases import share_empty_collections

HEAD = '''name = "many"
[target]
kind = "openai"
base_url = "http://127.0.0.1:9/v1"
model = "m"
[[variants]]
name = "a"
[[graders]]
kind = "contains"
'''


def _cases_toml(count: int, expected: str) -> str:
    return "".join(
        f'[[cases]]\nid = "c{i}"\nprompt = "question {i}"\nexpected = {expected}\ntags = ["t{i % 3}"]\n'
        f'metadata = {{ n = {i}, nested = {{ xs = [1.5, "two", true] }} }}\n'
        for i in range(count)
    )


def test_a_big_plan_reads_as_its_converted_cases_in_fresh_objects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = tmp_path / "many.toml"
    file.write_text(HEAD + _cases_toml(30, '"answer"'))
    monkeypatch.setattr(compact_cases, "COMPACT_FROM", 10**9)
    converted = load_plan(file).spec
    monkeypatch.setattr(compact_cases, "COMPACT_FROM", 20)
    fresh = compact_cases.compacted(converted)
    assert fresh.cases == converted.cases and fresh == converted
    pairs = zip(fresh.cases, converted.cases, strict=True)
    assert all(a is not b and a.prompt is not b.prompt for a, b in pairs)
    assert load_plan(file).spec == converted  # the loader's own, compacted while loading
    assert json.dumps([c.metadata for c in fresh.cases]) == json.dumps([c.metadata for c in converted.cases])


def test_a_case_a_round_trip_would_change_keeps_the_converted_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = tmp_path / "dated.toml"
    file.write_text(HEAD + _cases_toml(30, "2020-01-01"))  # a TOML date: msgpack would make it a string
    monkeypatch.setattr(compact_cases, "COMPACT_FROM", 20)
    spec = load_plan(file).spec
    assert spec.cases[0].expected == datetime.date(2020, 1, 1)
    assert compact_cases.compacted(spec) is spec


def test_a_small_plan_is_left_as_converted(tmp_path: Path) -> None:
    file = tmp_path / "few.toml"
    file.write_text(HEAD + _cases_toml(3, '"answer"'))
    spec = load_plan(file).spec
    assert compact_cases.compacted(spec) is spec


def test_a_big_owned_plan_shares_its_empties_in_cases_decoded_afresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = tmp_path / "owned.toml"
    bare = '[[cases]]\nid = "bare"\nprompt = "q"\nexpected = "a"\n'
    file.write_text(HEAD + _cases_toml(30, '"answer"') + bare)
    monkeypatch.setattr(compact_cases, "COMPACT_FROM", 20)
    monkeypatch.setattr(compact_cases, "CHUNK", 7)
    spec = load_plan(file).spec
    before, first = list(spec.cases), spec.cases[0]
    empties = share_empty_collections(spec)
    assert spec.cases == before and spec.cases[0] is not first  # equal, and decoded afresh
    assert spec.cases[-1].tags is empties["tags"] and spec.cases[-1].metadata is empties["metadata"]
    assert all(c.criteria is empties["criteria"] for c in spec.cases)
    assert spec.cases[0].tags == ["t0"] and spec.cases[0].tags is not empties["tags"]


def test_a_big_suite_reads_as_its_converted_cases(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [{"id": f"s{i}", "prompt": f"q {i}", "expected": "a", "tags": ["x"] * (i % 2)} for i in range(30)]
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    file = tmp_path / "suite.toml"
    file.write_text(HEAD + '[suite]\npath = "cases.jsonl"\n')
    monkeypatch.setattr(compact_cases, "COMPACT_FROM", 10**9)
    converted = load_plan(file).spec
    monkeypatch.setattr(compact_cases, "COMPACT_FROM", 20)
    monkeypatch.setattr(compact_cases, "CHUNK", 7)  # converted and decoded afresh 7 at a time
    compacted = load_plan(file).spec
    assert compacted == converted and [c.id for c in compacted.cases] == [f"s{i}" for i in range(30)]


def test_a_date_time_with_an_offset_keeps_the_plan_as_converted() -> None:
    from engine.events.spec import CaseSpec

    when = datetime.datetime(2024, 1, 1, 12, tzinfo=datetime.timezone(datetime.timedelta(hours=2)))
    cases = [CaseSpec(id=f"c{i}", prompt="q", metadata={"when": when}) for i in range(3)]
    assert compact_cases.decoded_afresh(cases) is None  # equal as instants, not written the same
