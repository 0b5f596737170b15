"""examples/keystone-sandbox, run by the commands its header prints: a Keystone spec whose agent must
query a service started in each trial's sandbox; the trial page shows the policy and the service's log."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import httpx

from tests.conftest import ROOT, SAFETY_S, run_engine
from tests.serve_helpers import serving
from tests.test_sandbox import sandbox  # noqa: F401 - the fixture: skipped (or failed in CI) without bwrap

EXAMPLE = ROOT / "examples" / "keystone-sandbox" / "stock-check.yaml"


def header_commands() -> list[list[str]]:
    lines = EXAMPLE.read_text().splitlines()
    return [shlex.split(line.strip("# ")) for line in lines if line.startswith("#   engine ")]


def test_the_walk_through_runs_as_written(sandbox: None, tmp_path: Path) -> None:  # noqa: F811
    validate, run = header_commands()
    store = tmp_path / "store"
    checked = run_engine(*validate[1:], cwd=ROOT)
    assert checked.returncode == 0, checked.stderr.decode()
    assert "sandbox: bubblewrap (network none), can start here" in checked.stdout.decode()
    ran = run_engine(*run[1:], cwd=ROOT, ENGINE_STORE=str(store))
    assert ran.returncode == 0, ran.stderr.decode()
    shown = "api: bubblewrap, network none, cpu_seconds 30, max_file_mb 10, max_processes 64, memory_mb 1024,"
    assert shown + " services inventory" in " ".join(ran.stdout.decode().split())  # limits by name
    shown = run_engine("report", "stock-demo", "--json", cwd=ROOT, ENGINE_STORE=str(store))
    report = json.loads(shown.stdout)
    rates = {v["name"]: v["pass_rate"] for v in report["variants"]}
    assert rates == {"api": 1.0, "memory": 0.333333} and report["error_rate"] == 0.0
    (policy,) = {json.dumps(v["sandbox"], sort_keys=True) for v in report["variants"]}
    assert json.loads(policy)["network"] == "none" and json.loads(policy)["services"] == ["inventory"]
    with serving(store) as url:
        page = httpx.get(f"{url}/runs/stock-demo/trial", params={"case": "teapot"}, timeout=SAFETY_S).text
    assert "sandbox: bubblewrap · network none · memory_mb 1024" in page
    assert "<summary>service inventory</summary>" in page and "GET /stock/teapot" in page
    assert "ssh key readable: False" in page  # the agent's stderr: no home to read a key from
