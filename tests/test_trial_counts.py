"""`engine list`, `engine status` and the web view's /api/runs give every kind of run one trial
count: an experiment its plan, a tuning session the trials it ran (it plans none up front), a run
registered by `engine create` and not started the trials it will run."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from tests.conftest import run_engine
from tests.serve_helpers import serving
from tests.test_cli_run import experiment

ROOT = Path(__file__).resolve().parent.parent


def listed(cwd: Path) -> dict[str, dict[str, object]]:
    shown = run_engine("list", "--json", "--store", "st", cwd=cwd)
    assert shown.returncode == 0, shown.stderr.decode()
    return {row["run_id"]: row for row in json.loads(shown.stdout)}


def status(cwd: Path, run_id: str) -> dict[str, object]:
    return json.loads(run_engine("status", run_id, "--json", "--store", "st", cwd=cwd).stdout)


def test_every_kind_of_run_has_one_trial_count_everywhere(tmp_path: Path) -> None:
    (tmp_path / "exp.toml").write_text(experiment(cases=5, repeats=3))  # 2 variants x 5 x 3 = 30
    created = run_engine("create", "exp.toml", "--run-id", "later", "--store", "st", cwd=tmp_path)
    assert created.returncode == 0 and b"30 trials" in created.stdout, created.stderr.decode()
    ran = run_engine("run", "exp.toml", "--run-id", "done", "-q", "--store", "st", cwd=tmp_path)
    tuned = run_engine("run", str(ROOT / "examples" / "tune.toml"), "--run-id", "tuned", "-q", "--json",
                       "--store", "st", cwd=tmp_path)  # fmt: skip
    assert ran.returncode == 0 and tuned.returncode == 0, tuned.stderr.decode()
    session = json.loads(tuned.stdout)
    rows = listed(tmp_path)
    expected = {"later": 30, "done": 30, "tuned": session["trials_done"]}
    assert session["trials_done"] > 0
    assert {rid: rows[rid]["trials_total"] for rid in expected} == expected
    assert rows["later"]["experiment"] == "capitals" and rows["later"]["status"] == "pending"
    assert status(tmp_path, "later")["trials_total"] == 30
    assert status(tmp_path, "done")["trials_total"] == 30
    assert status(tmp_path, "tuned")["trials_done"] == session["trials_done"]
    table = run_engine("list", "--store", "st", cwd=tmp_path).stdout.decode()
    later = next(line for line in table.splitlines() if "later" in line)
    assert "capitals" in later and " 30 " in later
    with serving(tmp_path / "st") as url:
        api = {row["run_id"]: row for row in httpx.get(f"{url}/api/runs", timeout=30).json()}
    assert {rid: api[rid]["trials_total"] for rid in expected} == expected
