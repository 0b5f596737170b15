"""An agent that did not start is an error (class agent_start) under any grader, never a graded fail:
a fleet experiment's `python3 fleet_agent.py` finds its script beside the file, a missing script is
refused before the first trial, and an agent that exits 126/127 (its tool not found or not
executable) is an error under a verifier and under Keystone's exit-code gate alike."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.compat.helpers import run_file, write_script
from tests.compat.test_fleet import project
from tests.conftest import run_engine

FLEET_AGENT = """import os
print("fix" if os.environ["ENGINE_VARIANT"] == "terse-v1" else "a long story")
"""
PYTHON_AGENT = f'target: {{ kind: command, command: ["{sys.executable}", "fleet_agent.py"] }}'


def _fleet(folder: Path, target: str) -> Path:
    file = project(folder)
    file.write_text(file.read_text().replace('target: { kind: command, command: ["./agent.sh"] }', target))
    return file


async def test_a_fleet_agents_script_beside_the_file_runs(tmp_path: Path) -> None:
    file = _fleet(tmp_path, PYTHON_AGENT)
    (tmp_path / "fleet_agent.py").write_text(FLEET_AGENT)
    report = await run_file(file)
    assert {v.name: (v.pass_rate, v.errors) for v in report.variants} == {
        "baseline": (0.0, 0), "terse-v1": (1.0, 0), "checklist-v1": (0.0, 0),
    }  # fmt: skip


def test_a_missing_script_is_refused_before_the_first_trial(tmp_path: Path) -> None:
    file = _fleet(tmp_path, PYTHON_AGENT)
    refused = run_engine("run", str(file), "--store", "st", cwd=tmp_path)
    err = refused.stderr.decode()
    assert refused.returncode == 2 and len(err.strip().splitlines()) == 1, err
    assert "'fleet_agent.py'" in err and "not found" in err and "target.command" in err
    assert not (tmp_path / "st").exists()  # nothing launched


async def test_an_agent_whose_tool_is_missing_is_an_error_under_a_verifier(tmp_path: Path) -> None:
    file = project(tmp_path)
    write_script(tmp_path / "agent.sh", "exec fleet-coder-cli-that-is-not-installed\n")  # exit 127
    report = await run_file(file)
    for variant in report.variants:
        assert variant.errors_by_class == {"agent_start": 12} and variant.pass_rate is None, variant


KEYSTONE = """
name: fix-failing-test
agent:
  type: cli
  binary: ./bin/my-agent
parallelism: { replicas: 2 }
cases:
  - { id: scenario-001, prompt: "fix test 001" }
  - { id: scenario-002, prompt: "fix test 002" }
"""


async def test_a_keystone_agent_that_cannot_exec_is_an_error_its_other_exits_are_results(
    tmp_path: Path,
) -> None:
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "runner.sh").write_text("echo never\n")  # not executable: exec exits 126
    write_script(
        tmp_path / "bin" / "my-agent",
        f"""read prompt
case "$prompt" in
  *001*) exec {tmp_path}/bin/runner.sh;;
  *) echo "1 test failed"; exit 1;;
esac
""",
    )
    (tmp_path / "spec.yaml").write_text(KEYSTONE)
    report = await run_file(tmp_path / "spec.yaml")
    verdicts = {s.case: s.verdict for s in report.scenarios}
    assert verdicts == {"scenario-001": "error", "scenario-002": "fail"}
    assert report.variants[0].errors_by_class == {"agent_start": 2}
