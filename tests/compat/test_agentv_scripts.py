"""AgentV's `scripts:` as its users write them: `- build` is the project's package script (npm or bun by
the lock file), checked in the trial's workspace where the agent left its files; a script the
package.json does not list is refused before the first trial. A `.jsonl` suite is a suite level of
the run directory, and each case's summary.json carries its fingerprint."""

from __future__ import annotations

import json
from pathlib import Path

from engine.input.loader import load_experiment
from tests.compat.helpers import write_script
from tests.conftest import run_engine

TARGETS = """
targets:
  - name: coder
    provider: cli
    command: ["./bin/coder.sh"]
"""
# the coder builds dist/app.js in its working folder, except on the ticket it cannot do
CODER = """read prompt
case "$prompt" in
  *legacy*) echo "could not build";;
  *) mkdir -p dist && cp template.js dist/app.js && echo "done";;
esac
"""
EXPERIMENT = """
name: build-check
target: coder
suites:
  - ref: evals/tickets.jsonl
setup:
  - script: cp src/template.js template.js
scripts:
  - build
runs: 1
"""
TICKETS = [
    {"id": "add-endpoint", "input": "add the /health endpoint", "expected_output": "done"},
    {"id": "legacy-port", "input": "port the legacy module", "expected_output": "done"},
]


def project(root: Path, experiment: str = EXPERIMENT, lock: str = "package-lock.json") -> Path:
    (root / ".agentv").mkdir(parents=True, exist_ok=True)
    (root / ".agentv" / "targets.yaml").write_text(TARGETS)
    write_script(root / "bin" / "coder.sh", CODER)
    (root / "src").mkdir(exist_ok=True)
    (root / "src" / "template.js").write_text("console.log('ok')\n")
    package = {"name": "shop", "private": True, "scripts": {"build": "test -f dist/app.js", "lint": "true"}}
    (root / "package.json").write_text(json.dumps(package))
    (root / lock).write_text("{}\n")
    (root / "evals").mkdir(exist_ok=True)
    (root / "evals" / "tickets.jsonl").write_text("\n".join(json.dumps(t) for t in TICKETS) + "\n")
    (root / "experiments").mkdir(exist_ok=True)
    (root / "experiments" / "default.yaml").write_text(experiment)
    return root / "experiments" / "default.yaml"


def _scripts_grader(file: Path) -> tuple[list[str], bool]:
    (grader,) = [g for g in load_experiment(file).graders if g.name == "scripts"]
    return grader.commands, grader.workspace  # type: ignore[union-attr]


def test_a_bare_name_is_the_package_script_by_the_lock_file(tmp_path: Path) -> None:
    assert _scripts_grader(project(tmp_path / "npm")) == (["npm run build"], True)
    assert _scripts_grader(project(tmp_path / "bun", lock="bun.lock"))[0] == ["bun run build"]
    assert _scripts_grader(project(tmp_path / "bunb", lock="bun.lockb"))[0] == ["bun run build"]


def test_the_build_script_checks_the_agents_files_in_its_workspace(tmp_path: Path) -> None:
    file = project(tmp_path)
    ran = run_engine("run", str(file), "--json", "--run-id", "av", "--store", "st", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr.decode()
    report = json.loads(ran.stdout)
    (variant,) = report["variants"]
    assert (variant["errors"], variant["passed"], variant["scored"]) == (0, 1, 2)
    verdicts = {s["case"]: s["verdict"] for s in report["scenarios"]}
    assert verdicts == {"add-endpoint": "pass", "legacy-port": "fail"}  # graded, not errors
    lines = run_engine("export", "av", "--format", "jsonl", "--store", "st", cwd=tmp_path).stdout.splitlines()
    legacy = next(json.loads(line) for line in lines if json.loads(line)["case"] == "legacy-port")
    reasons = " ".join(g["reason"] for g in legacy["grades"])
    assert "'npm run build' exited with 1" in reasons, reasons
    assert not (tmp_path / "dist").exists()  # the agent's files stayed in its workspace


def test_a_script_the_package_does_not_list_is_refused_before_the_first_trial(tmp_path: Path) -> None:
    file = project(tmp_path, EXPERIMENT.replace("  - build\n", "  - biuld\n"))
    refused = run_engine("run", str(file), "--store", "st", cwd=tmp_path)
    err = refused.stderr.decode()
    assert refused.returncode == 2 and len(err.strip().splitlines()) == 1, err
    assert "scripts[0]: expected a script 'biuld'" in err and "build, lint" in err
    assert not (tmp_path / "st").exists()


def test_a_jsonl_suite_is_a_suite_level_and_cases_carry_fingerprints(tmp_path: Path) -> None:
    file = project(tmp_path)
    for run_id in ("av-1", "av-2"):
        ran = run_engine("run", str(file), "-q", "--run-id", run_id, "--store", "st", cwd=tmp_path)
        assert ran.returncode == 0, ran.stderr.decode()
        out = tmp_path / run_id
        exported = run_engine("export", run_id, "--format", "rundir", "--out", str(out), "--store", "st",
                              cwd=tmp_path)  # fmt: skip
        assert exported.returncode == 0, exported.stderr.decode()
    one, two = (
        tmp_path / r / "baseline" / "tickets" / "add-endpoint" / "summary.json" for r in ("av-1", "av-2")
    )
    first, second = json.loads(one.read_text()), json.loads(two.read_text())
    assert first["fingerprint"].startswith("sha256:") and first["fingerprint"] == second["fingerprint"]
    other = json.loads((one.parent.parent / "legacy-port" / "summary.json").read_text())
    assert other["fingerprint"] != first["fingerprint"]
