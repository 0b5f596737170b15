"""A grader that needs `expected` on cases without one scores nothing there: `validate`, `run` and the
report say so, with the count, instead of a silent 0 or blank."""

from __future__ import annotations

import json
from pathlib import Path

from engine.input.loader import load_experiment
from engine.store.projections.outcome import unscorable_graders
from tests.conftest import run_engine

EXPERIMENT = """
name = "references"
[target]
kind = "local"
[[graders]]
kind = "contains"
[[graders]]
kind = "regex"
pattern = "."
[[cases]]
id = "a"
prompt = "capital of France?"
reference = "Paris"
[[cases]]
id = "b"
prompt = "capital of Spain?"
reference = "Madrid"
[[cases]]
id = "c"
prompt = "capital of Italy?"
expected = "Rome"
"""

WHY = (
    "graders[0]: contains needs each case's `expected` (or its own `value`): 2 of 3 cases have none "
    "(2 carry only a `reference`, which judges read), so it cannot score them"
)


def test_validate_and_run_warn_and_every_report_format_says_it(tmp_path: Path) -> None:
    (tmp_path / "exp.toml").write_text(EXPERIMENT)
    checked = run_engine("validate", "exp.toml", cwd=tmp_path)
    assert checked.returncode == 0, checked.stderr.decode()
    # its own line, once (three cases also bring the plan's decidability warning)
    graders = [line for line in checked.stderr.decode().splitlines() if "graders[" in line]
    assert graders == [f"warning: exp.toml: {WHY}"]
    ran = run_engine("run", "exp.toml", "--run-id", "r", "--store", "st", "--json", cwd=tmp_path)
    assert ran.stderr.decode().count(WHY) == 1  # said once, before the run
    assert f"exp.toml: {WHY}" in ran.stderr.decode()
    assert WHY in json.loads(ran.stdout)["warnings"]
    for args in (["--format", "markdown"], ["--format", "html"], []):
        shown = run_engine("report", "r", *args, "--store", "st", cwd=tmp_path)
        text = " ".join(shown.stdout.decode().split())
        assert "cases have none" in text and "2 of 3" in text, args


def test_a_grader_with_its_own_value_or_cases_with_expected_are_not_flagged(tmp_path: Path) -> None:
    own_value = EXPERIMENT.replace('kind = "contains"', 'kind = "contains"\nvalue = "capital"')
    (tmp_path / "own.toml").write_text(own_value)
    assert unscorable_graders(load_experiment(tmp_path / "own.toml")) == []
    every_case = EXPERIMENT.replace('reference = "Paris"', 'expected = "Paris"').replace(
        'reference = "Madrid"', 'expected = "Madrid"'
    )
    (tmp_path / "all.toml").write_text(every_case)
    assert unscorable_graders(load_experiment(tmp_path / "all.toml")) == []
    exact = EXPERIMENT.replace('kind = "contains"', 'kind = "exact"\nname = "answer"')
    (tmp_path / "exact.toml").write_text(exact)
    ((field, why),) = unscorable_graders(load_experiment(tmp_path / "exact.toml"))
    assert field == "graders[0]" and why.startswith("answer needs each case's `expected`")
