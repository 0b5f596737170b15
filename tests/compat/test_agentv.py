"""AgentV users bring their project as it is: .agentv/targets.yaml, .agentv/config.yaml, experiments/
and evals/*.eval.yaml with tests[]."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.errors import InputError
from engine.input.loader import load_experiment
from tests.compat.helpers import run_file, write_script
from tests.conftest import run_engine

TARGETS = """
targets:
  - name: copilot
    provider: cli
    command: "echo Yes, the order is eligible for a refund."
  - name: claude
    provider: cli
    command: "echo I cannot help with that."
  - name: gemini
    provider: cli
    command: "echo eligible: $HOOKS"
"""
EVAL = """
tests:
  - id: refund-eligibility
    input: Is my order 1234 refundable?
    expected_output: eligible
    criteria: Says whether the order is eligible for a refund
  - id: missing-order-date
    input: I lost the order date, can I still get a refund?
    expected_output: eligible
  - id: shipping-time
    input: When will it ship?
    expected_output: days
"""
EXPERIMENT = """
name: baseline
targets:
  - copilot
  - claude
  - name: gemini-with-hooks
    use_target: gemini
    env: { HOOKS: "on" }
suites:
  - ref: evals/support-*.eval.yaml
    select:
      test_ids:
        - refund-*
        - missing-order-date
timeout_seconds: 720
runs: 3
early_exit: true
graders:
  - { kind: contains }
"""


def project(root: Path, experiment: str = EXPERIMENT) -> Path:
    (root / ".agentv").mkdir(parents=True, exist_ok=True)
    (root / ".agentv" / "targets.yaml").write_text(TARGETS)
    (root / ".agentv" / "config.yaml").write_text("experiments:\n  default: experiments/default.yaml\n")
    (root / "evals").mkdir(exist_ok=True)
    (root / "evals" / "support-regression.eval.yaml").write_text(EVAL)
    (root / "experiments").mkdir(exist_ok=True)
    (root / "experiments" / "default.yaml").write_text(experiment)
    return root / "experiments" / "default.yaml"


def test_named_targets_become_a_matrix_and_eval_tests_the_cases(tmp_path: Path) -> None:
    spec = load_experiment(project(tmp_path))
    assert [v.name for v in spec.variants] == ["copilot", "claude", "gemini-with-hooks"]
    assert spec.variants[2].target == {
        "kind": "command",
        "command": "echo eligible: $HOOKS",
        "env": {"HOOKS": "on"},
    }
    assert [c.id for c in spec.cases] == ["refund-eligibility", "missing-order-date"]
    refund = spec.cases[0]
    assert (refund.prompt, refund.expected) == ("Is my order 1234 refundable?", "eligible")
    assert refund.reference == "Says whether the order is eligible for a refund"
    assert spec.repeat.strategy == "pass_at_k" and spec.execution.trial_timeout_s == 720


def test_a_single_named_target_and_unknown_names(tmp_path: Path) -> None:
    matrix = EXPERIMENT[EXPERIMENT.index("targets:") : EXPERIMENT.index("suites:")]
    file = project(tmp_path, EXPERIMENT.replace(matrix, "target: claude\n"))
    assert load_experiment(file).target.command == "echo I cannot help with that."  # type: ignore[union-attr]
    file.write_text(file.read_text().replace("target: claude", "target: codex-gpt5"))
    with pytest.raises(InputError, match="target: expected a target named in .agentv/targets.yaml"):
        load_experiment(file)


def test_a_container_image_sandbox_is_refused_naming_the_field(tmp_path: Path) -> None:
    file = project(tmp_path, EXPERIMENT + "sandbox: { image: node:20 }\n")
    refused = run_engine("validate", str(file), cwd=tmp_path)
    err = refused.stderr.decode()
    assert refused.returncode == 2 and "sandbox.image: a container image needs the docker sandbox" in err
    assert len(err.strip().splitlines()) == 1


def test_sandbox_puts_every_agent_and_the_scripts_in_a_bubblewrap_sandbox(tmp_path: Path) -> None:
    sandbox = "sandbox: { network: loopback, host_ports: [8080], limits: { max_processes: 64 } }\n"
    spec = load_experiment(project(tmp_path, EXPERIMENT + "scripts:\n  - test -s output.txt\n" + sandbox))
    policies = [v.target["sandbox"] for v in spec.variants]
    assert policies == ["bubblewrap"] * 3 and spec.target.policy.network == "loopback"  # type: ignore[union-attr]
    (scripts,) = [g for g in spec.graders if g.kind == "command"]
    assert scripts.policy.limits.max_processes == 64 and scripts.policy.network == "loopback"  # type: ignore[union-attr]


async def test_it_runs_with_early_exit(tmp_path: Path) -> None:
    report = await run_file(project(tmp_path))
    rates = {v.name: v.pass_rate for v in report.variants}
    assert rates == {"copilot": 1.0, "claude": 0.0, "gemini-with-hooks": 1.0}
    assert {v.name: v.skipped for v in report.variants} == {"copilot": 4, "claude": 0, "gemini-with-hooks": 4}


def test_the_default_experiment_and_the_run_directory(tmp_path: Path) -> None:
    project(tmp_path)
    ran = run_engine("run", "--run-id", "av", "-q", "--store", "st", cwd=tmp_path)  # no FILE: the default
    assert ran.returncode == 0, ran.stderr.decode()
    out = tmp_path / "rd"
    exported = run_engine(
        "export", "av", "--format", "rundir", "--out", str(out), "--store", "st", cwd=tmp_path
    )
    assert exported.returncode == 0, exported.stderr.decode()
    case = out / "copilot" / "support-regression" / "refund-eligibility"  # a folder per eval suite
    assert sorted(p.name for p in case.iterdir()) == ["run-1", "summary.json"]  # runs 2-3 early-exited
    assert json.loads((case / "summary.json").read_text())["runs"] == ["run-1"]
    messages = json.loads((case / "run-1" / "transcript.json").read_text())["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[0]["content"] == "Is my order 1234 refundable?"
    raw = (case / "run-1" / "transcript-raw.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in raw] == messages
    result = json.loads((case / "run-1" / "result.json").read_text())
    assert result["transcript_path"] == "transcript.json"
    index = [json.loads(line) for line in (out / "index.jsonl").read_text().splitlines()]
    skipped = [e for e in index if e["status"] == "skipped"]
    assert len(skipped) == 8 and all(e["result_path"] is None for e in skipped)


async def test_a_relative_agent_in_targets_yaml_is_the_projects(tmp_path: Path) -> None:
    project(tmp_path)
    write_script(tmp_path / "bin" / "agent.sh", 'echo "eligible via $0"\n')
    targets = (tmp_path / ".agentv" / "targets.yaml").read_text()
    (tmp_path / ".agentv" / "targets.yaml").write_text(
        targets.replace(
            'command: "echo Yes, the order is eligible for a refund."', 'command: ["./bin/agent.sh"]'
        )
    )
    report = await run_file(tmp_path / "experiments" / "default.yaml")
    copilot = next(v for v in report.variants if v.name == "copilot")
    assert copilot.errors == 0 and copilot.pass_rate == 1.0  # experiments/bin/agent.sh does not exist


def test_eval_files_as_written_assertions_and_message_lists(tmp_path: Path) -> None:
    file = project(tmp_path)
    (tmp_path / "evals" / "support-regression.eval.yaml").write_text("""
name: support
tests:
  - id: refund-eligibility
    input:
      - { role: system, content: You are a support agent. }
      - { role: user, content: "Is my order 1234 refundable?" }
    expected_output: eligible
    assertions:
      - { type: contains, value: eligible }
""")
    (case,) = load_experiment(file).cases
    assert case.prompt == "Is my order 1234 refundable?" and case.context == "You are a support agent."
    assert case.metadata["assertions"] == [{"type": "contains", "value": "eligible"}]
    assert case.metadata["suite"] == "support"


def test_an_agent_provider_name_is_explained(tmp_path: Path) -> None:
    file = project(tmp_path)
    targets = (tmp_path / ".agentv" / "targets.yaml").read_text()
    (tmp_path / ".agentv" / "targets.yaml").write_text(
        targets.replace("provider: cli", "provider: copilot-cli", 1)
    )
    with pytest.raises(InputError, match=r"targets\[0\]\.provider: expected one of cli, .*'copilot-cli'"):
        load_experiment(file)
