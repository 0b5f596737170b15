"""A Keystone candidate whose one scenario now always errors fails `compare --gate`: beside the
per-case failure rule, each scenario's errored replicas are compared on their own (Fisher's exact
test, Holm across scenarios) and named; the error-rate row, which counts errored replicas within each
scenario, sees the rise too. JUnit names an error by its class (agent_start, agent_exit), as CI
groups them."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.compat.helpers import keystone_spec, write_script
from tests.compat.test_fleet import project as fleet_project
from tests.conftest import run_engine

SPEC = keystone_spec(replicas=10)

HEALTHY = 'read prompt\necho "tests pass"\n'
# the candidate's scenario-002 calls a test runner that is not installed: the agent never starts it
BROKEN = """read prompt
case "$prompt" in *002*) exec keystone-test-runner-not-installed;; esac
echo "tests pass"
"""


def _run(folder: Path, run_id: str, agent: str, exit_code: int = 0) -> None:
    write_script(folder / "bin" / "my-agent", agent)
    (folder / "spec.yaml").write_text(SPEC)
    ran = run_engine("run", "spec.yaml", "-q", "--run-id", run_id, "--store", "st", cwd=folder)
    assert ran.returncode == exit_code, ran.stderr.decode()


def test_one_scenario_that_now_always_errors_fails_the_gate(tmp_path: Path) -> None:
    _run(tmp_path, "base", HEALTHY)
    _run(tmp_path, "cand", BROKEN, exit_code=1)  # 10 of 60 trials errored: above max_error_rate
    gated = run_engine("compare", "base", "cand", "--gate", "--json", "--store", "st", cwd=tmp_path)
    assert gated.returncode == 1, gated.stderr.decode()
    result = json.loads(gated.stdout)
    (erroring,) = result["newly_erroring"]
    assert [erroring[k] for k in ("case", "baseline", "candidate")] == ["scenario-002", "0/10", "10/10"]
    assert any("case scenario-002 went from 0/10 to 10/10 erroring" in r for r in result["regressions"])
    (error_rate,) = [m for m in result["metrics"] if m["metric"] == "error_rate"]
    # the 10 errored replicas all fell in the candidate's, within one scenario: significant alone (a
    # sign flip over the 6 scenarios' shares, with one changed, was not)
    assert error_rate["regressed"] and error_rate["p_value"] < 0.01
    shown = run_engine("compare", "base", "cand", "--gate", "--store", "st", cwd=tmp_path)
    assert shown.returncode == 1 and "cases newly erroring" in shown.stdout.decode()
    same = run_engine("compare", "base", "base", "--gate", "--store", "st", cwd=tmp_path)
    assert same.returncode == 0, same.stdout.decode()
    junit = run_engine("export", "cand", "--format", "junit", "--store", "st", cwd=tmp_path)
    errors = ET.fromstring(junit.stdout).findall(".//error")
    assert len(errors) == 10 and {e.get("type") for e in errors} == {"agent_start"}


def test_junit_types_an_agents_crash_by_its_class(tmp_path: Path) -> None:
    file = fleet_project(tmp_path)
    file.write_text(file.read_text().replace("grader: verifier", "grader: heuristic"))
    write_script(tmp_path / "agent.sh", 'echo "segfault in the fleet worker" >&2\nexit 139\n')
    ran = run_engine("run", str(file), "-q", "--run-id", "fleet", "--store", "st", cwd=tmp_path)
    assert ran.returncode == 1 and "100% of trials had no usable result" in ran.stderr.decode()
    junit = run_engine("export", "fleet", "--format", "junit", "--store", "st", cwd=tmp_path)
    errors = ET.fromstring(junit.stdout).findall(".//error")
    assert errors and {e.get("type") for e in errors} == {"agent_exit"}
    assert "agent exited with 139" in errors[0].get("message", "")
