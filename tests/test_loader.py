"""Experiment files (TOML, YAML), suites in four formats, and errors naming file, field and expectation."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.errors import InputError
from engine.loader import load_experiment

GOOD = """
name = "ok"
[[variants]]
name = "baseline"
[[cases]]
id = "a"
prompt = "p"
expected = "x"
"""


def write(tmp_path: Path, text: str, name: str = "exp.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def error(path: Path) -> str:
    with pytest.raises(InputError) as caught:
        load_experiment(path)
    return str(caught.value)


def test_toml_and_yaml_load_the_same_spec(tmp_path: Path) -> None:
    yaml_text = "name: ok\nvariants:\n  - name: baseline\ncases:\n  - id: a\n    prompt: p\n    expected: x\n"
    assert load_experiment(write(tmp_path, GOOD)) == load_experiment(write(tmp_path, yaml_text, "exp.yaml"))


@pytest.mark.parametrize(
    ("extra", "field", "expected"),
    [
        ('[budget]\nmax_trials = "x"\n', "budget.max_trials", "expected int"),
        ("[repeat]\ncuont = 3\n", "repeat", "unknown field cuont"),
        ('[[graders]]\nkind = "regex"\npattern = "("\n', "graders[0].pattern", "valid regular expression"),
        ('[[graders]]\nkind = "telepathy"\n', "graders[0].kind", "expected one of"),
        ("[repeat]\ncount = 0\n", "repeat.count", "expected an integer >= 1"),
        ('[[cases]]\nid = "a"\nprompt = "again"\nexpected = "y"\n', "cases[1].id", "unique id"),
        ('[target]\nkind = "openai"\n', "target.base_url", "base URL"),
    ],
)
def test_errors_name_file_field_and_expectation(
    tmp_path: Path, extra: str, field: str, expected: str
) -> None:
    path = write(tmp_path, GOOD + extra)
    message = error(path)
    assert message.startswith(str(path)) and field in message and expected in message


def test_case_without_prompt_and_bad_syntax(tmp_path: Path) -> None:
    assert "cases[0]" in error(write(tmp_path, 'name = "n"\n[[cases]]\nid = "a"\n')) and "prompt" in error(
        write(tmp_path, 'name = "n"\n[[cases]]\nid = "a"\n')
    )
    assert "invalid TOML" in error(write(tmp_path, "name = \n"))
    assert "invalid YAML" in error(write(tmp_path, "name: [unclosed\n", "bad.yaml"))
    assert "file not found" in error(tmp_path / "missing.toml")


SUITES = {
    "cases.jsonl": '{"id": "geo-1", "prompt": "a", "tags": ["geo"]}\n{"id": "math-1", "prompt": "b"}\n',
    "cases.csv": "id,prompt,expected,tags\ngeo-1,a,x,geo;easy\nmath-1,b,y,\n",
    "cases.yaml": "cases:\n  - id: geo-1\n    prompt: a\n    tags: [geo]\n  - id: math-1\n    prompt: b\n",
    "cases.toml": '[[cases]]\nid = "geo-1"\nprompt = "a"\ntags = ["geo"]\n'
    '[[cases]]\nid = "math-1"\nprompt = "b"\n',
}


@pytest.mark.parametrize("suite", sorted(SUITES))
def test_suites_with_select_globs_and_tags(tmp_path: Path, suite: str) -> None:
    (tmp_path / suite).write_text(SUITES[suite])
    graders = '[[graders]]\nkind = "regex"\npattern = "."\n'
    by_glob = load_experiment(
        write(tmp_path, f'name = "s"\n{graders}[suite]\npath = "{suite}"\nselect = ["geo-*"]\n')
    )
    assert [c.id for c in by_glob.cases] == ["geo-1"]
    by_tag = load_experiment(
        write(tmp_path, f'name = "s"\n{graders}[suite]\npath = "{suite}"\ntags = ["geo"]\n')
    )
    assert [c.id for c in by_tag.cases] == ["geo-1"]
    everything = load_experiment(write(tmp_path, f'name = "s"\n{graders}[suite]\npath = "{suite}"\n'))
    assert [c.id for c in everything.cases] == ["geo-1", "math-1"]


def test_a_bad_jsonl_line_is_named(tmp_path: Path) -> None:
    (tmp_path / "cases.jsonl").write_text('{"id": "a", "prompt": "p"}\n{oops\n')
    message = error(write(tmp_path, 'name = "s"\n[suite]\npath = "cases.jsonl"\n'))
    assert "cases.jsonl" in message and "line 2" in message and "invalid JSON" in message
