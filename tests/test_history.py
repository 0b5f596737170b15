"""`engine history`, `engine mark` and `engine compare last-green` on a real store, through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_engine
from tests.test_cli_run import experiment


def run(tmp_path: Path, write_experiment, run_id: str, text: str) -> None:
    file = write_experiment(text, f"{run_id}.toml")
    done = run_engine("run", str(file), "-q", "--run-id", run_id, "--store", "st", cwd=tmp_path)
    assert done.returncode == 0, done.stderr.decode()


def test_history_marks_and_last_green(tmp_path: Path, write_experiment) -> None:
    good = experiment(cases=20, repeats=1)
    # the second variant much worse than the baseline: that run is not green on its own
    worse = good.replace("temperature = 0.7", "temperature = 0.05").replace(
        "{ temperature = 0.1 }", "{ temperature = 1.2 }"
    )
    for run_id, text in (("r1", good), ("r2", good), ("r3", worse), ("r4", good)):
        run(tmp_path, write_experiment, run_id, text)
    listed = run_engine("history", "capitals", "--json", "--store", "st", cwd=tmp_path)
    points = json.loads(listed.stdout)
    assert [p["run_id"] for p in points] == ["r1", "r2", "r3", "r4"]
    assert [p["green"] for p in points] == [True, True, False, True]
    assert all(0 <= p["pass_rate"] <= 1 and p["variant"] == "baseline" for p in points)
    assert points[2]["spec_hash"] != points[0]["spec_hash"]
    args = ("history", "capitals", "--variant", "cold", "--metric", "mean_score", "--json", "--store", "st")
    cold = json.loads(run_engine(*args, cwd=tmp_path).stdout)
    assert {p["variant"] for p in cold} == {"cold"}
    terminal = run_engine("history", "capitals", "--store", "st", cwd=tmp_path).stdout.decode()
    assert "last green: r4" in terminal and any(bar in terminal for bar in "▁▂▃▄▅▆▇█")
    # r4's last green run before it is r2 (r3 is not green); marking r2 red moves it back to r1
    compared = json.loads(
        run_engine("compare", "last-green", "r4", "--json", "--store", "st", cwd=tmp_path).stdout
    )
    assert compared["baseline_run"] == "r2"
    assert run_engine("mark", "r2", "red", "--store", "st", cwd=tmp_path).returncode == 0
    compared = json.loads(
        run_engine("compare", "last-green", "r4", "--json", "--store", "st", cwd=tmp_path).stdout
    )
    assert compared["baseline_run"] == "r1"
    # a red run marked green by a person is green
    assert run_engine("mark", "r3", "green", "--store", "st", cwd=tmp_path).returncode == 0
    compared = json.loads(
        run_engine("compare", "last-green", "r4", "--json", "--store", "st", cwd=tmp_path).stdout
    )
    assert compared["baseline_run"] == "r3"
    assert any("specs differ in: params, variants" in w for w in compared["warnings"]), compared["warnings"]


def test_history_errors_are_one_line(tmp_path: Path, write_experiment) -> None:
    run(tmp_path, write_experiment, "only", experiment(cases=3, repeats=1))
    for args, expected in (
        (["history", "nope"], b"no runs of an experiment named 'nope'"),
        (["history", "capitals", "--metric", "vibes"], b"expected one of pass_rate"),
        (["compare", "last-green", "only"], b"no green run of 'capitals' before only"),
        (["mark", "only", "blue"], b"expected green or red"),
    ):
        done = run_engine(*args, "--store", "st", cwd=tmp_path)
        assert done.returncode == 2 and expected in done.stderr and b"Traceback" not in done.stderr, args


def test_a_run_that_cannot_go_green_says_so_and_how_to_mark_it(tmp_path: Path, write_experiment) -> None:
    good = experiment(cases=20, repeats=1)
    worse = good.replace("temperature = 0.7", "temperature = 0.05").replace(
        "{ temperature = 0.1 }", "{ temperature = 1.2 }"
    )
    run(tmp_path, write_experiment, "w1", worse)
    args = ("compare", "last-green", "w1", "--gate", "--no-baseline-ok", "--store", "st")
    first = run_engine(*args, cwd=tmp_path)
    lines = first.stdout.decode().splitlines()
    assert first.returncode == 0 and "keeps a run from going green" in first.stdout.decode()
    mark = lines[-1]
    assert mark == f"engine mark w1 green --store {tmp_path.resolve() / 'st'}"  # absolute: runs anywhere
    marked = run_engine(*mark.split()[1:], cwd=tmp_path.parent)  # the printed command, as printed
    assert marked.returncode == 0, marked.stderr.decode()
    run(tmp_path, write_experiment, "w2", worse)
    gated = run_engine("compare", "last-green", "w2", "--gate", "--json", "--store", "st", cwd=tmp_path)
    assert json.loads(gated.stdout)["baseline_run"] == "w1"
