"""Keystone shapes: parallelism/resources, {{ matrix.x }} in agent args, forbidden rules, verdicts."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import msgspec
import pytest

from engine.actors.graders.factory import make_grader, make_graders
from engine.actors.graders.grader_protocol import Submission
from engine.actors.targets.target_protocol import TargetRequest
from engine.api import open_engine, spec_from_dict
from engine.errors import InputError
from engine.events.spec import CaseSpec, grader_spec
from engine.input.loader import load_experiment
from tests.conftest import SAFETY_S

KEYSTONE_YAML = """
name: model-bake-off
target:
  kind: command
  command: ["{python}", "-c", "import sys; print(' '.join(sys.argv[1:]))", "--model", "{{ matrix.model }}",
            "--locale", "{{matrix.locale}}"]
parallelism:
  replicas: 2
  isolation: per_run
  matrix:
    - { name: sonnet, model: claude-sonnet-4-5, locale: en_US }
    - { name: gpt, model: gpt-4o, locale: ja_JP }
resources:
  concurrency_limit: 3
cases:
  - { id: fix, prompt: fix the failing test, expected: "--model" }
graders:
  - { kind: contains }
  - { kind: forbidden, name: no_japanese_locale, value: ja_JP }
"""

CLI = [sys.executable, "-m", "engine.cli.main"]



def sub(case: CaseSpec, output: str) -> Submission:
    return Submission(case=case, output=output)

def test_parallelism_and_resources_become_repeats_matrix_and_concurrency(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(KEYSTONE_YAML.replace("{python}", sys.executable))
    spec = load_experiment(path)
    assert spec.repeat.count == 2 and spec.execution.concurrency == 3
    assert spec.matrix == [
        {"name": "sonnet", "model": "claude-sonnet-4-5", "locale": "en_US"},
        {"name": "gpt", "model": "gpt-4o", "locale": "ja_JP"},
    ]


@pytest.mark.parametrize(
    ("extra", "field", "expected"),
    [
        ({"parallelism": {"replicas": 2}, "repeat": {"count": 3}}, "parallelism.replicas", "repeat.count"),
        (
            {"parallelism": {"matrix": [{"model": "a"}]}, "matrix": [{"model": "b"}]},
            "parallelism.matrix",
            "matrix",
        ),
        ({"parallelism": {"isolation": "vm"}}, "parallelism.isolation", "per_run"),
        ({"parallelism": {"lanes": 3}}, "parallelism.lanes", "replicas, matrix or isolation"),
        ({"resources": {"cpus": 3}}, "resources.cpus", "concurrency_limit"),
        ({"graders": [{"kind": "forbidden"}]}, "graders[0].value", "forbidden text"),
        (
            {"scoring": {"replica_aggregation": {"min_pass_rate": 0}}},
            "scoring.replica_aggregation.min_pass_rate",
            "above 0",
        ),
    ],
)
def test_bad_keystone_shapes_name_the_field(extra: dict[str, object], field: str, expected: str) -> None:
    with pytest.raises(InputError) as caught:
        spec_from_dict({"name": "k", "cases": [{"id": "a", "prompt": "p", "expected": "x"}], **extra})
    assert caught.value.field == field and expected in caught.value.expected


def test_matrix_values_reach_the_agent_and_forbidden_rules_fail_trials(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(KEYSTONE_YAML.replace("{python}", sys.executable))
    store = tmp_path / "store"
    cli = [sys.executable, "-m", "engine.cli.main"]
    done = subprocess.run(
        [*cli, "run", str(path), "--json", "-q", "--store", str(store)],
        capture_output=True,
        text=True,
        timeout=SAFETY_S,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    by_name = {v["name"]: v for v in report["variants"]}
    # both printed "--model ..." (contains passes); the ja_JP one trips the forbidden rule
    assert by_name["sonnet"]["pass_rate"] == 1.0 and by_name["gpt"]["pass_rate"] == 0.0
    assert by_name["gpt"]["mean_score"] == 0.0  # a forbidden match sinks the score: it must never win
    assert by_name["sonnet"]["cases"] == {"passed": 1, "failed": 0, "flaky": 0, "errors": 0, "ungraded": 0}
    exported = subprocess.run(
        [*cli, "export", report["run_id"], "--format", "jsonl", "--store", str(store)],
        capture_output=True, text=True, timeout=SAFETY_S, check=True,
    )  # fmt: skip
    markdown = subprocess.run(
        [*cli, "report", report["run_id"], "--markdown", "--store", str(store)],
        capture_output=True, text=True, timeout=SAFETY_S, check=True,
    ).stdout  # fmt: skip
    assert "| p/f/fl/e |" in markdown and "| 0/1/0/0 |" in markdown
    outputs = {
        json.loads(line)["variant"]: json.loads(line)["output"].strip()
        for line in exported.stdout.splitlines()
    }
    assert outputs == {
        "sonnet": "--model claude-sonnet-4-5 --locale en_US",
        "gpt": "--model gpt-4o --locale ja_JP",
    }


def test_a_missing_matrix_value_is_refused_before_the_run(tmp_path: Path) -> None:
    yaml_text = KEYSTONE_YAML.replace("{python}", sys.executable).replace(
        "{{matrix.locale}}", "{{ matrix.region }}"
    )
    path = tmp_path / "spec.yaml"
    path.write_text(yaml_text)
    done = subprocess.run(
        [*CLI, "run", str(path), "--json", "-q", "--store", str(tmp_path / "s")],
        capture_output=True, text=True, timeout=SAFETY_S,
    )  # fmt: skip
    assert done.returncode == 2 and done.stdout == "" and "Traceback" not in done.stderr
    assert "target.command: expected every placeholder filled" in done.stderr and "'region'" in done.stderr


async def test_forbidden_rule_by_pattern_is_a_weightless_gate() -> None:
    grader = make_grader(grader_spec(kind="forbidden", pattern=r"sk-[A-Za-z0-9]{8,}", name="secrets_in_logs"))
    case = CaseSpec(id="c", prompt="p")
    clean = await grader.grade(sub(case, "all good"))
    leaked = await grader.grade(sub(case, "key sk-ABCDEFGH123"))
    assert (clean.passed, clean.gate, clean.weight) == (True, True, 0.0)
    assert not leaked.passed and "secrets" not in leaked.reason and "forbidden" in leaked.reason
    # forbidden rules alone: the default check still scores the output
    assert [g.spec.kind for g in make_graders([grader_spec(kind="forbidden", value="x")])] == [
        "contains",
        "forbidden",
    ]


async def flaky_agent(request: TargetRequest) -> str:
    # case "steady" always right; "shaky" right on repeats 0-2 of 4; "wrong" never; "broken" raises
    if request.case.id == "broken":
        raise RuntimeError("sandbox boot failed")
    right = request.case.id == "steady" or (request.case.id == "shaky" and request.repeat < 3)
    return "yes" if right else "no"


@pytest.mark.parametrize(
    ("aggregation", "verdicts"),
    [
        ({}, {"passed": 1, "failed": 1, "flaky": 1, "errors": 1, "ungraded": 0}),
        ({"strategy": "any"}, {"passed": 2, "failed": 1, "flaky": 0, "errors": 1, "ungraded": 0}),
        (
            {"strategy": "percentage", "min_pass_rate": 0.75},
            {"passed": 2, "failed": 1, "flaky": 0, "errors": 1, "ungraded": 0},
        ),
        (
            {"strategy": "percentage", "min_pass_rate": 0.85},
            {"passed": 1, "failed": 1, "flaky": 1, "errors": 1, "ungraded": 0},
        ),
    ],
)
async def test_case_verdicts_follow_replica_aggregation(
    aggregation: dict[str, object], verdicts: dict[str, int]
) -> None:
    spec = spec_from_dict(
        {
            "name": "flakiness",
            "target": {"kind": "python", "callable": "agent", "max_retries": 0},
            "cases": [
                {"id": c, "prompt": c, "expected": "yes"} for c in ("steady", "shaky", "wrong", "broken")
            ],
            "repeat": {"count": 4},
            "scoring": {"replica_aggregation": aggregation},
        }
    )
    async with open_engine(tempfile.mkdtemp(), callables={"agent": flaky_agent}) as eng:
        report = await eng.run(spec)
    (variant,) = report.variants
    assert msgspec.to_builtins(variant.cases) == verdicts


def test_per_run_keeps_a_fresh_folder_until_the_spec_asks_for_a_sandbox(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(KEYSTONE_YAML.replace("{python}", sys.executable))
    assert load_experiment(path).target.sandbox == "none"  # type: ignore[union-attr]
    services = "services:\n  - { name: api, command: ./api.py, ready: 'tcp:8000', timeout_seconds: 5 }\n"
    path.write_text(KEYSTONE_YAML.replace("{python}", sys.executable) + services)
    target = load_experiment(path).target
    assert target.sandbox == "bubblewrap" and target.policy.network == "none"  # type: ignore[union-attr]
    assert [(s.name, s.ready, s.timeout_s) for s in target.services] == [("api", "tcp:8000", 5.0)]  # type: ignore[union-attr]
    path.write_text(path.read_text().replace("isolation: per_run", "isolation: shared"))
    shared = load_experiment(path).target
    assert shared.workspace == "shared" and shared.services == target.services  # type: ignore[union-attr]
