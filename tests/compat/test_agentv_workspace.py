"""AgentV's setup runs where the agent works, its scripts add to the expected-output check, and an eval
file's assertions are run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.errors import InputWarning
from engine.input.loader import load_experiment
from tests.compat.helpers import run_file, write_script
from tests.conftest import run_engine, warnings_in

TARGETS = """
targets:
  - name: support-agent
    provider: cli
    command: ["./bin/agent.sh"]
"""
# the agent answers from the AGENTS.md in its working folder, and fails without it
AGENT = """if [ ! -f AGENTS.md ]; then echo "no AGENTS.md in $(pwd)" >&2; exit 1; fi
echo "Per our policy: $(cat AGENTS.md)"
"""
EVAL = """
name: support
tests:
  - id: refund-window
    input: How long do I have to ask for a refund?
    expected_output: 30 days
  - id: refund-receipt
    input: Do I need a receipt for a refund?
    expected_output: 30 days
"""
WITH_DOCS = """
name: with-docs
target: support-agent
suites:
  - ref: evals/support.eval.yaml
setup:
  - script: cp skills/with-docs/AGENTS.md AGENTS.md
runs: 1
"""


def project(root: Path, experiment: str = WITH_DOCS, docs: str = "Refunds within 30 days.") -> Path:
    (root / ".agentv").mkdir(parents=True, exist_ok=True)
    (root / ".agentv" / "targets.yaml").write_text(TARGETS)
    write_script(root / "bin" / "agent.sh", AGENT)
    (root / "skills" / "with-docs").mkdir(parents=True, exist_ok=True)
    (root / "skills" / "with-docs" / "AGENTS.md").write_text(docs + "\n")
    (root / "skills" / "without-docs").mkdir(exist_ok=True)
    (root / "evals").mkdir(exist_ok=True)
    (root / "evals" / "support.eval.yaml").write_text(EVAL)
    (root / "experiments").mkdir(exist_ok=True)
    (root / "experiments" / "with-docs.yaml").write_text(experiment)
    return root / "experiments" / "with-docs.yaml"


async def test_setup_copies_the_file_into_each_trials_workspace(tmp_path: Path) -> None:
    file = project(tmp_path)
    report = await run_file(file)
    (variant,) = report.variants
    assert (variant.pass_rate, variant.errors) == (1.0, 0), report.errors
    # the copy is the workspace's own: the project's folders are untouched
    assert not (tmp_path / "AGENTS.md").exists() and not (tmp_path / "experiments" / "AGENTS.md").exists()
    without = project(
        tmp_path, WITH_DOCS.replace("setup:\n  - script: cp skills/with-docs/AGENTS.md AGENTS.md\n", "")
    )
    (bare,) = (await run_file(without)).variants
    assert bare.passed == 0 and bare.trials == 2  # without the docs the agent exits 1: no trial passes


def test_only_the_named_files_are_copied(tmp_path: Path) -> None:
    spec = load_experiment(project(tmp_path))
    (variant,) = spec.variants
    copy, command = variant.setup
    source = tmp_path.resolve() / "skills" / "with-docs" / "AGENTS.md"
    assert copy == f"mkdir -p skills/with-docs && cp -R {source} skills/with-docs/AGENTS.md"
    assert command == "cp skills/with-docs/AGENTS.md AGENTS.md" and spec.setup == []


async def test_scripts_add_to_the_expected_output_check(tmp_path: Path) -> None:
    scripts = WITH_DOCS + "scripts:\n  - script: grep -q Per output.txt\n"  # the scripts pass either way
    right = await run_file(project(tmp_path, scripts))
    assert right.variants[0].pass_rate == 1.0
    wrong = await run_file(project(tmp_path, scripts, docs="Refunds within 14 days."))
    assert wrong.variants[0].pass_rate == 0.0  # a wrong answer fails even though every script passed
    failing = WITH_DOCS + "scripts:\n  - script: grep -q receipt output.txt\n"
    assert (await run_file(project(tmp_path, failing))).variants[0].pass_rate == 0.0


ASSERTED = """
name: support
tests:
  - id: refund-window
    input: How long do I have to ask for a refund?
    assertions:
      - { type: contains, value: "30 days" }
      - { type: regex, value: "^Per our policy" }
      - { type: not-contains, value: "sorry" }
      - { type: latency, threshold: 2000 }
  - id: refund-json
    input: Answer as JSON
    assert:
      - { type: is-json }
      - { type: llm-judge, prompt: "Is the answer polite?" }
      - { type: tool-trajectory, expected: [] }
"""


async def test_eval_file_assertions_run_and_unmapped_kinds_are_named_once(tmp_path: Path) -> None:
    file = project(tmp_path)
    (tmp_path / "evals" / "support.eval.yaml").write_text(ASSERTED)
    with pytest.warns(
        InputWarning, match=r"assertions: not run \(no engine grader for them\): latency, tool-traj"
    ):
        spec = load_experiment(file)
    window, as_json = spec.cases
    assert [g["kind"] for g in window.criteria["graders"]] == ["contains", "regex", "forbidden"]
    assert [g["kind"] for g in as_json.criteria["graders"]] == ["json", "judge"]
    assert as_json.criteria["graders"][1]["rubric"][0]["description"] == "Is the answer polite?"
    (tmp_path / "evals" / "support.eval.yaml").write_text(ASSERTED.split("  - id: refund-json")[0])
    report = await run_file(file)
    assert report.variants[0].pass_rate == 1.0  # "Per our policy: Refunds within 30 days."
    wrong = project(tmp_path, docs="We are sorry: refunds within 30 days.")
    (tmp_path / "evals" / "support.eval.yaml").write_text(ASSERTED.split("  - id: refund-json")[0])
    assert (await run_file(wrong)).variants[0].pass_rate == 0.0  # the not-contains assertion fails it


def test_the_unmapped_kinds_warning_is_one_line_from_the_cli(tmp_path: Path) -> None:
    file = project(tmp_path)
    (tmp_path / "evals" / "support.eval.yaml").write_text(ASSERTED)
    done = run_engine("validate", str(file), cwd=tmp_path)
    warnings = [line for line in warnings_in(done.stderr) if "assertions" in line]
    assert done.returncode == 0 and len(warnings) == 1, done.stderr.decode()
    assert (
        "support.eval.yaml: assertions: not run" in warnings[0] and json.dumps("latency")[1:-1] in warnings[0]
    )


def test_setup_with_a_fixed_workdir_is_refused(tmp_path: Path) -> None:
    file = project(tmp_path)
    targets = tmp_path / ".agentv" / "targets.yaml"
    targets.write_text(TARGETS + "    workdir: .\n")
    done = run_engine("validate", str(file), cwd=tmp_path)
    err = done.stderr.decode()
    assert done.returncode == 2 and "with-docs.yaml: setup: runs in each trial's own workspace" in err, err
