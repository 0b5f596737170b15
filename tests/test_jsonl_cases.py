"""A JSONL suite's plain lines read straight into cases give the cases (or the error) the records'
path gives, whatever the lines: plain cases, other tools' shapes, lines without an id, NaN, unknown
fields, assertion graders, repeated keys."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.errors import InputError
from engine.events.spec import SuiteSpec
from engine.input import jsonl_cases
from engine.input.suites import load_suite

names = st.text(st.sampled_from(list("abcdefgh-_")), min_size=4, max_size=8)
texts = st.text(st.sampled_from(list("ab \"\\é→\u2028")), max_size=6)
values = st.one_of(texts, st.integers(-(2**70), 2**70), st.floats(allow_nan=False), st.booleans(), st.none())
plain = st.fixed_dictionaries(
    {"id": names, "prompt": texts},
    optional={"expected": values, "tags": st.lists(texts, max_size=2), "context": texts,
              "metadata": st.dictionaries(texts, values, max_size=2), "criteria": st.just({"rubric": "r"})},
)  # fmt: skip
other = st.one_of(
    st.fixed_dictionaries({"prompt": texts}),  # no id: one from the prompt's hash
    st.fixed_dictionaries({"id": names, "input": texts, "expected_output": values}),
    st.fixed_dictionaries({"id": names, "prompt": texts, "unknown": values}),
    st.fixed_dictionaries({"id": names, "prompt": texts, "assertions": st.just(["contains:x"])}),
)
odd = st.sampled_from(['{"id": "n", "prompt": "p", "expected": NaN}', '{"id": "d", "prompt": "p", "id": "e"}',
                       '{"id": "x", "prompt": 3}', "[1, 2]", "{bad", "   "])  # fmt: skip
line = st.one_of(plain.map(json.dumps), plain.map(json.dumps), other.map(json.dumps), odd)  # mostly plain
lines = st.lists(line, min_size=1, max_size=8, unique=True)


def _load(tmp: Path, text: str) -> object:
    (tmp / "cases.jsonl").write_text(text)
    try:
        return load_suite(tmp, SuiteSpec(path="cases.jsonl"), "exp.toml")
    except InputError as exc:
        return str(exc)


@pytest.mark.filterwarnings("ignore::engine.errors.InputWarning")  # the assertion lines' warning, each time
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines)
def test_lines_read_as_cases_are_the_records_cases(tmp_path: Path, suite: list[str]) -> None:
    text = "\n".join(suite) + "\n"
    typed = _load(tmp_path, text)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(jsonl_cases, "_case", lambda line: None)  # every line by the records' path
        assert _load(tmp_path, text) == typed
