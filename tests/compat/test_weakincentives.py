"""weakincentives users bring their dataset, their override store and their evaluator as they are."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.api import open_engine
from engine.errors import InputError, InputWarning
from engine.input.loader import load_experiment
from engine.store.memory import MemoryStore
from engine.store.projection import run_events
from engine.views.compare.comparison import compare_runs
from tests.conftest import run_engine

EXPERIMENT = """
name: code-review-prompts
target: {kind: python, callable: "reviewer:answer"}
dataset: qa.jsonl
experiments:
  - {name: baseline, overrides_tag: latest}
  - name: concise-prompts
    overrides_tag: v2-concise
    flags: {max_response_tokens: 500}
    owner: alice@example.com
    description: Test shorter, more direct prompt phrasing
  - {name: v3-prompts, overrides_tag: v3}
graders:
  - {kind: python, callable: "evaluator:grade"}
"""

REVIEWER = '''
def answer(request):
    """Answers right only under the concise prompt; the source prompt rambles."""
    if request.system == "Answer with the bare value.":
        return request.case.expected
    return "Well, it depends: " + str(request.case.expected).lower()
'''

EVALUATOR = '''
def grade(case, output, context):
    """weakincentives-style evaluator: the case, the output, and the variant/session context."""
    limit = context.variant.flags.get("max_response_tokens", 10_000)
    passed = output == case.expected and len(output.split()) <= limit
    return {"score": 1.0 if passed else 0.0, "passed": passed,
            "reason": f"{context.variant.name} repeat {context.repeat}"}
'''


def project(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    rows = [{"id": f"q{i}", "input": f"What is {i} + {i}?", "expected": str(2 * i)} for i in range(8)]
    rows.append({"id": "structured", "input": {"diff": "- a\n+ b", "lang": "py"}, "expected": "LGTM"})
    (folder / "qa.jsonl").write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    prompt = folder / ".weakincentives" / "prompts" / "overrides" / "review" / "system-prompt"
    prompt.mkdir(parents=True)
    (prompt / "v2-concise.json").write_text('{"system": "Answer with the bare value."}')
    (folder / "reviewer.py").write_text(REVIEWER)
    (folder / "evaluator.py").write_text(EVALUATOR)
    (folder / "experiment.yaml").write_text(EXPERIMENT)
    return folder / "experiment.yaml"


def test_dataset_rows_and_the_override_store_load_as_written(tmp_path: Path) -> None:
    with pytest.warns(InputWarning, match=r"variants\[2\].overrides_tag: no override file v3.*source prompt"):
        spec = load_experiment(project(tmp_path))
    assert [v.name for v in spec.variants] == ["baseline", "concise-prompts", "v3-prompts"]
    assert spec.variants[1].system == "Answer with the bare value."  # {ns}/{key}/{tag}.json
    assert spec.variants[2].system is None  # a missing tag falls back to the source prompt
    q0 = spec.cases[0]
    assert (q0.id, q0.prompt, q0.expected) == ("q0", "What is 0 + 0?", "0")
    structured = spec.cases[-1]
    assert json.loads(structured.prompt) == structured.metadata["input"] == {"diff": "- a\n+ b", "lang": "py"}


def test_strict_refuses_a_missing_tag(tmp_path: Path) -> None:
    file = project(tmp_path)
    file.write_text(EXPERIMENT + "overrides_strict: true\n")
    with pytest.raises(InputError, match="overrides_tag: no override file v3"):
        load_experiment(file)
    refused = run_engine("validate", str(file), cwd=tmp_path)
    assert refused.returncode == 2 and "variants[2].overrides_tag" in refused.stderr.decode()


async def test_a_python_evaluator_grades_and_any_two_experiments_compare(tmp_path: Path) -> None:
    file = project(tmp_path)
    with pytest.warns(InputWarning):
        spec = load_experiment(file)
    store = MemoryStore()
    async with open_engine(store) as eng:
        report = await eng.run(spec, source=str(file), run_id="wink")
    rates = {v.name: v.pass_rate for v in report.variants}
    assert rates == {"baseline": 0.0, "concise-prompts": 1.0, "v3-prompts": 0.0}
    # the evaluator saw each trial's variant and repeat
    trial = eng_trial_reason(store, "wink", "concise-prompts")
    assert trial == "concise-prompts repeat 0"
    within = compare_runs(store, "wink", "wink", variants=("concise-prompts", "v3-prompts"))
    (pass_rate,) = [m for m in within.metrics if m.metric == "pass_rate"]
    assert (pass_rate.baseline, pass_rate.candidate) == (1.0, 0.0)
    assert within.regressed and {c.case for c in within.newly_failing} <= {c.id for c in spec.cases}


def eng_trial_reason(store: MemoryStore, run_id: str, variant: str) -> str:
    graded = run_events(store, run_id, {"trial.graded"})
    return next(e.grades[0].reason for e in graded if e.variant == variant)  # type: ignore[attr-defined]


def test_compare_two_experiments_of_one_run_from_the_cli(tmp_path: Path) -> None:
    file = project(tmp_path)
    ran = run_engine("run", str(file), "-q", "--run-id", "r", "--store", "st", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr.decode()
    assert "warning: " in ran.stderr.decode() and "Traceback" not in ran.stderr.decode()
    args = ("compare", "r", "r", "--base-variant", "baseline", "--variant", "concise-prompts", "--json")
    compared = json.loads(run_engine(*args, "--store", "st", cwd=tmp_path).stdout)
    (pass_rate,) = [m for m in compared["metrics"] if m["metric"] == "pass_rate"]
    assert (pass_rate["baseline"], pass_rate["candidate"]) == (0.0, 1.0)


def test_a_regrade_finds_the_evaluator_beside_the_experiment(tmp_path: Path) -> None:
    file = project(tmp_path / "project")
    elsewhere = tmp_path / "ci"
    elsewhere.mkdir()
    store = str(tmp_path / "st")
    assert (
        run_engine("run", str(file), "-q", "--run-id", "r", "--store", store, cwd=elsewhere).returncode == 0
    )
    (elsewhere / "graders.yaml").write_text('graders:\n  - {kind: python, callable: "evaluator:grade"}\n')
    regraded = run_engine(
        "regrade", "r", "--graders", "graders.yaml", "--json", "--store", store, cwd=elsewhere
    )
    assert regraded.returncode == 0, regraded.stderr.decode()
    rates = {v["name"]: v["pass_rate"] for v in json.loads(regraded.stdout)["variants"]}
    assert rates == {"baseline": 0.0, "concise-prompts": 1.0, "v3-prompts": 0.0}


def test_the_file_names_the_eval_and_the_fallback_warning_stays_in_the_report(tmp_path: Path) -> None:
    file = project(tmp_path)
    named = file.with_name("code_review.yaml")
    named.write_text(EXPERIMENT.replace("name: code-review-prompts\n", ""))
    ran = run_engine("run", str(named), "--json", "--store", "st", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr.decode()
    report = json.loads(ran.stdout)
    assert report["experiment"] == "code_review"
    (warning,) = report["warnings"]
    assert "variants[2].overrides_tag: no override file v3" in warning and "source prompt" in warning
    shown = run_engine("report", report["run_id"], "--json", "--store", "st", cwd=tmp_path)
    assert json.loads(shown.stdout)["warnings"] == [warning]  # replayed from the log, not the terminal
