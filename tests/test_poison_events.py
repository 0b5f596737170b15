"""Nothing that reaches the log makes a run unreadable: an event the fold cannot use is skipped and
named in the report, and report, replay, status and resume go on working."""

from __future__ import annotations

import json
import math
from pathlib import Path

from engine.events import kinds as k
from engine.events.codec import encode
from engine.store.log.event_log import Append
from engine.store.open import open_event_log
from tests.conftest import run_engine
from tests.test_cli_run import experiment


def poison(store: Path, run_id: str) -> None:
    ident = {"run_id": run_id, "variant": "baseline", "case": "c000"}
    events = [
        k.TrialGraded(**ident, repeat=7, score=math.nan, passed=False),
        k.TrialCompleted(**ident, repeat=8, output_hash="x", latency_ms=math.inf, cost_usd=math.nan),
        k.TrialFailed(**ident, repeat=-1, error_kind="infra", message="negative repeat"),
    ]
    with open_event_log(store) as log:
        log.append([Append(run_id, k.TAG_BY_TYPE[type(e)], encode(e)) for e in events])


def test_poison_events_are_skipped_and_reported_and_the_run_stays_readable(
    tmp_path: Path, write_experiment
) -> None:
    file = write_experiment(experiment(cases=3, repeats=1))
    ran = run_engine("run", str(file), "--json", "--run-id", "r", "--store", "st", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr.decode()
    clean = json.loads(ran.stdout)
    poison(tmp_path / "st", "r")
    for command in (["report", "r", "--json"], ["replay", "r", "--json"], ["status", "r"], ["list"]):
        done = run_engine(*command, "--store", "st", cwd=tmp_path)
        assert done.returncode == 0 and b"Traceback" not in done.stderr, (command, done.stderr.decode())
    report = json.loads(run_engine("replay", "r", "--json", "--store", "st", cwd=tmp_path).stdout)
    assert report["data_error_count"] == 3 and len(report["data_errors"]) == 3
    assert any("trial.graded" in e["message"] for e in report["data_errors"])
    assert report["warnings"] and "could not be used" in report["warnings"][0]
    assert [v["mean_score"] for v in report["variants"]] == [v["mean_score"] for v in clean["variants"]]
    terminal = run_engine("replay", "r", "--store", "st", cwd=tmp_path).stdout.decode()
    assert "Warning: 3 stored events could not be used" in terminal
    resumed = run_engine("run", "--resume", "r", "--json", "--store", "st", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr.decode()


def test_a_target_reporting_impossible_figures_gets_trial_errors_not_a_poisoned_log(
    tmp_path: Path, write_experiment
) -> None:
    text = experiment(cases=4, repeats=1).replace(
        "tests.fixtures.agent:capital", "tests.fixtures.agent:poison_figures"
    )
    ran = run_engine(
        "run", str(write_experiment(text)), "--json", "--run-id", "p", "--store", "st", cwd=tmp_path
    )
    assert ran.returncode == 1 and b"Traceback" not in ran.stderr  # 6 of 8 trials errored: above the limit
    report = json.loads(ran.stdout)
    assert report["data_error_count"] == 0  # nothing unusable reached the log
    classes = {e["class"]: e["count"] for e in report["errors"]}
    assert classes == {"bad_metrics": 6}  # 3 poisoned cases x 2 variants
    assert all(v["passed"] == 1 for v in report["variants"])  # the sane case still counts
