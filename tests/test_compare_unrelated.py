"""`engine compare` of runs that share no case says "nothing to compare" (terminal, JSON, the compare
page and the gate, which exits 2: neither a pass nor a regression), and lists each spec field that
differs with both values. Real runs of the python target on a real store; the page over real HTTP."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from tests.conftest import run_engine
from tests.serve_helpers import serving
from tests.test_cli_run import experiment


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cwd = tmp_path_factory.mktemp("unrelated")
    (cwd / "a.toml").write_text(experiment(cases=6, repeats=2))
    other = experiment(cases=6, repeats=2).replace('id = "c0', 'id = "other-c0')  # no id in common
    (cwd / "b.toml").write_text(other.replace("temperature = 0.1", "temperature = 0.3"))
    for run_id, file in (("ra", "a.toml"), ("rb", "b.toml"), ("rc", "b.toml")):
        ran = run_engine("run", file, "--run-id", run_id, "--store", "st", "-q", cwd=cwd)
        assert ran.returncode in (0, 1), ran.stderr.decode()
    return cwd / "st"


def compare(store: Path, *args: str) -> tuple[int, str]:
    ran = run_engine("compare", *args, "--store", str(store), cwd=store.parent)
    assert not ran.stderr.strip() or ran.returncode != 0, ran.stderr.decode()
    return ran.returncode, ran.stdout.decode()


def test_runs_with_no_shared_case_are_nothing_to_compare_never_regressed(store: Path) -> None:
    code, out = compare(store, "ra", "rb", "--json")
    result = json.loads(out)
    assert code == 0 and result["nothing_to_compare"] and not result["regressed"]
    assert result["shared_cases"] == 0 and result["metrics"] == [] and result["regressions"] == []
    code, out = compare(store, "ra", "rb")
    assert code == 0 and "nothing to compare" in out and "REGRESSED" not in out


def test_the_gate_exits_2_when_there_is_nothing_to_compare(store: Path) -> None:
    code, out = compare(store, "ra", "rb", "--gate")
    assert code == 2 and "nothing to compare" in out
    # the same cases: compared, the gate passes (latency allowed to double: on a loaded machine two
    # runs of the same in-process target differ in time by more than the default threshold)
    code, _ = compare(store, "rb", "rc", "--gate", "--max-p95-latency-increase", "1.0")
    assert code == 0


def test_the_spec_fields_that_differ_are_listed_with_both_values(store: Path) -> None:
    _, out = compare(store, "ra", "rb", "--json")
    differences = {d["field"]: (d["baseline"], d["candidate"]) for d in json.loads(out)["spec_differences"]}
    assert differences == {"variants[cold].params.temperature": ("0.1", "0.3")}
    _, shown = compare(store, "ra", "rb")
    assert "variants[cold].params.temperature" in shown and "0.3" in shown
    _, same = compare(store, "rb", "rc", "--json")
    assert json.loads(same)["spec_differences"] == []


def test_the_compare_page_says_nothing_to_compare_and_how_the_specs_differ(store: Path) -> None:
    with serving(store) as url:
        page = httpx.get(f"{url}/compare", params={"base": "ra", "cand": "rb"}).text
        api = httpx.get(f"{url}/api/compare", params={"base": "ra", "cand": "rb"}).json()
    assert "Nothing to compare: the runs share no case." in page and "REGRESSED" not in page
    assert "<code>variants[cold].params.temperature</code></td><td>0.1</td><td>0.3</td>" in page
    assert api["nothing_to_compare"] is True and api["regressed"] is False
