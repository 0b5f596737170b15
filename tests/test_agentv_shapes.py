"""AgentV / Vercel experiment shapes load as engine's own and run end to end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from engine.api import spec_from_dict
from engine.errors import InputError
from engine.input.loader import load_experiment
from tests.conftest import SAFETY_S

AGENTV_YAML = """
name: baseline
target:
  kind: command
  command: ["{python}", "{agent}"]
suites:
  - ref: evals/support-*.jsonl
    select:
      test_ids:
        - refund-*
        - missing-order-date
  - ref: evals/billing.jsonl
timeout_seconds: 720
repeat:
  count: 4
  strategy: pass_at_k
  costLimitUsd: 2.00
setup:
  - script: echo setting up
scripts:
  - grep -q refund output.txt
  - script: test -s output.txt
    timeout_seconds: 120
"""

CLI = [sys.executable, "-m", "engine.cli.main"]


def write_suites(root: Path) -> None:
    evals = root / "evals"
    evals.mkdir()
    ids = ("refund-eligibility", "refund-late", "missing-order-date")
    support = [{"id": i, "prompt": f"case {i}"} for i in ids]
    support.append({"id": "unrelated", "prompt": "dropped by select"})
    (evals / "support-regression.jsonl").write_text("\n".join(json.dumps(c) for c in support))
    (evals / "billing.jsonl").write_text(json.dumps({"id": "invoice", "prompt": "an invoice"}))


AGENT = """
import json, os, sys
sys.stderr.write("trace\\n")
print("refund ok: " + sys.stdin.read())
json.dump({"tool_calls": 3}, open(os.environ["ENGINE_METRICS_FILE"], "w"))
"""


def agentv_file(tmp_path: Path) -> Path:
    write_suites(tmp_path)
    (tmp_path / "agent.py").write_text(AGENT)
    path = tmp_path / "experiments" / "default.yaml"
    path.parent.mkdir()
    text = AGENTV_YAML.replace("{python}", sys.executable).replace("{agent}", str(tmp_path / "agent.py"))
    path.write_text(text.replace("evals/", "../evals/"))
    return path


def test_an_agentv_experiment_loads_as_engine_fields(tmp_path: Path) -> None:
    spec = load_experiment(agentv_file(tmp_path))
    expected_ids = ["refund-eligibility", "refund-late", "missing-order-date", "invoice"]
    assert [c.id for c in spec.cases] == expected_ids
    assert (spec.repeat.count, spec.repeat.strategy, spec.repeat.cost_limit_usd) == (4, "pass_at_k", 2.0)
    assert spec.execution.trial_timeout_s == 720
    # setup runs in each trial's workspace: the (one) variant's, not once in the experiment's folder
    assert spec.setup == []
    assert [(v.name, v.setup) for v in spec.variants] == [("baseline", ["echo setting up"])]
    expected, scripts = spec.graders  # scripts add to the expected-output check: both are gates
    assert (expected.kind, expected.expected, expected.gate) == ("case", True, True)
    assert (scripts.kind, scripts.name, scripts.timeout_s) == ("command", "scripts", 120.0) and scripts.gate
    assert scripts.commands == ["grep -q refund output.txt", "test -s output.txt"]
    assert spec.suite is None and spec.suites == []


def test_vercel_runs_shorthand_is_an_early_exit_pass_at_k() -> None:
    # a file in AgentV's vocabulary names its subject (here engine's local model, explicitly)
    base = {"name": "v", "target": {"kind": "local"}, "cases": [{"id": "a", "prompt": "p", "expected": "x"}]}
    spec = spec_from_dict({**base, "runs": 4, "early_exit": False})
    assert (spec.repeat.count, spec.repeat.strategy, spec.repeat.early_exit) == (4, "pass_at_k", False)
    assert spec_from_dict({**base, "runs": 2}).repeat.early_exit is True


@pytest.mark.parametrize(
    ("extra", "field", "expected"),
    [
        ({"runs": 3, "repeat": {"count": 2}}, "runs", "not together with `repeat`"),
        ({"early_exit": True}, "early_exit", "goes with `runs`"),
        ({"scripts": "make test"}, "scripts", "expected a list of commands"),
        ({"scripts": [{"timeout_seconds": 5}]}, "scripts[0]", "with `script`"),
        ({"scripts": [{"script": "x", "timeout_seconds": -1}]}, "scripts[0].timeout_seconds", "positive"),
        ({"suites": [{"ref": "nowhere-*.jsonl"}]}, "suites[0].path", "no suite file matches"),
        ({"suites": [{"ref": "x.jsonl", "select": {"ids": ["a"]}}]}, "suites[0].select", "test_ids"),
    ],
)
def test_bad_agentv_shapes_name_the_field(extra: dict[str, object], field: str, expected: str) -> None:
    with pytest.raises(InputError) as caught:
        cases = [{"id": "a", "prompt": "p", "expected": "x"}]
        spec_from_dict({"name": "v", "target": {"kind": "local"}, "cases": cases, **extra})
    assert caught.value.field == field and expected in caught.value.expected


def test_an_agentv_experiment_runs_from_the_cli(tmp_path: Path) -> None:
    path = agentv_file(tmp_path)
    done = subprocess.run(
        [*CLI, "run", str(path), "--json", "-q", "--store", str(tmp_path / "s")],
        capture_output=True,
        text=True,
        timeout=SAFETY_S,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    (variant,) = report["variants"]
    # pass_at_k with early exit: every case passes its scripts on the first attempt
    assert (variant["trials"], variant["pass_rate"], report["is_partial"]) == (4, 1.0, False)
    # the AgentV run directory keeps each attempt's stderr and the agent's own metrics
    out = tmp_path / "rundir"
    export = [
        "export",
        report["run_id"],
        "--format",
        "rundir",
        "--out",
        str(out),
        "--store",
        str(tmp_path / "s"),
    ]
    subprocess.run([*CLI, *export], check=True, capture_output=True, timeout=SAFETY_S)
    attempt = out / "baseline" / "billing" / "invoice" / "run-1"  # a .jsonl suite is a suite level
    assert (attempt / "outputs" / "stderr.txt").read_text() == "trace\n"
    assert json.loads((attempt / "metrics.json").read_text())["tool_calls"] == 3.0
