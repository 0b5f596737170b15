"""examples/keystone/fix-failing-test.yaml, run by the commands its header prints (the README's
"Coming from Keystone" walks through it): Keystone's verdicts and the gate come out as shown there."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from tests.conftest import ROOT, run_engine

EXAMPLE = ROOT / "examples" / "keystone" / "fix-failing-test.yaml"


def _header_commands() -> list[list[str]]:
    lines = EXAMPLE.read_text().splitlines()
    return [shlex.split(line.strip("# ")) for line in lines if line.startswith("#   engine ")]


def test_the_keystone_example_gives_pass_fail_flaky_and_fails_the_gate(tmp_path: Path) -> None:
    run, compare = _header_commands()
    assert run[:2] == ["engine", "run"] and compare[:2] == ["engine", "compare"]
    store = str(tmp_path / "store")
    ran = run_engine(*run[1:], cwd=ROOT, ENGINE_STORE=store)
    assert ran.returncode == 0, ran.stderr.decode()
    text = " ".join(ran.stdout.decode().split())
    assert "gpt / scenario-001: flaky (2/6 passed)" in text
    assert "gpt / scenario-002: fail (0/6 passed)" in text
    # the README's walk-through shows these words as engine prints them
    assert "sonnet (baseline, tied best)" in text and "Tied best: sonnet, gpt" in text
    shown = run_engine("report", "keystone-demo", "--json", cwd=ROOT, ENGINE_STORE=store)
    report = json.loads(shown.stdout)
    verdicts = {(s["variant"], s["case"]): s["verdict"] for s in report["scenarios"]}
    assert verdicts == {
        ("sonnet", "scenario-000"): "pass", ("sonnet", "scenario-001"): "pass",
        ("sonnet", "scenario-002"): "pass", ("gpt", "scenario-000"): "pass",
        ("gpt", "scenario-001"): "flaky", ("gpt", "scenario-002"): "fail",
    }  # fmt: skip
    assert report["error_rate"] == 0.0 and [v["errors"] for v in report["variants"]] == [0, 0]
    gated = run_engine(*compare[1:], cwd=ROOT, ENGINE_STORE=store)
    assert gated.returncode == 1
    out = " ".join(gated.stdout.decode().split())
    assert "REGRESSED: sonnet->gpt: case scenario-002 went from 6/6 to 0/6 passing" in out
    assert "p (raw) / ratio CI p (Holm)" in out and "(Fisher's exact test, p (Holm) 0.00649)" in out
