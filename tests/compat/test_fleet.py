"""agents-fleet users bring their `*.experiment.md` (the RFC's front matter) as they wrote it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.errors import InputError
from engine.input.loader import load_experiment
from tests.compat.helpers import run_file, write_script
from tests.conftest import run_engine

SKILL = "You are the fleet's coder.\nWrite the fix.\nExplain every step at length.\n"
TERSE = """--- a/skills/coder.md
+++ b/skills/coder.md
@@ -1,3 +1,3 @@
 You are the fleet's coder.
 Write the fix.
-Explain every step at length.
+Answer with the fix only.
"""
CHECKLIST = "You are the fleet's coder.\nFollow the checklist: reproduce, fix, test.\n"
EXPERIMENT = """---
name: tighten-coder-skill
kind: skill
suite: core-coding-cases
grader: verifier
skill: skills/coder.md
config: { maxVariants: 4, perTrialTimeoutMs: 120000 }
target: { kind: command, command: ["./agent.sh"] }
variants:
  - id: baseline # variant 0 = current skill
  - id: terse-v1
    label: Terse
    patch: variants/terse-v1.md
  - id: checklist-v1
    patch: variants/checklist-v1.md
---
# Tighten coder skill

Free-form rationale / notes for the experiment.
"""
# the agent reads its skill text from ENGINE_SYSTEM... here from the variant name: terse answers "fix"
AGENT = 'if [ "$ENGINE_VARIANT" = "terse-v1" ]; then echo fix; else echo "a long story"; fi\n'


def project(folder: Path, experiment: str = EXPERIMENT) -> Path:
    (folder / "skills").mkdir(parents=True, exist_ok=True)
    (folder / "skills" / "coder.md").write_text(SKILL)
    (folder / "variants").mkdir(exist_ok=True)
    (folder / "variants" / "terse-v1.md").write_text(TERSE)
    (folder / "variants" / "checklist-v1.md").write_text(CHECKLIST)
    cases = [{"id": f"bug-{i}", "prompt": f"fix bug {i}",
              "criteria": {"commands": ["grep -qx fix output.txt"]}} for i in range(4)]  # fmt: skip
    (folder / "core-coding-cases.jsonl").write_text("\n".join(json.dumps(c) for c in cases) + "\n")
    write_script(folder / "agent.sh", AGENT)
    (folder / "tighten.experiment.md").write_text(experiment)
    return folder / "tighten.experiment.md"


def test_the_front_matter_loads_as_written(tmp_path: Path) -> None:
    spec = load_experiment(project(tmp_path))
    assert spec.kind == "experiment" and spec.repeat.count == 3  # the shape's default repeats
    assert [v.name for v in spec.variants] == ["baseline", "terse-v1", "checklist-v1"]
    baseline, terse, checklist = spec.variants
    assert baseline.system == SKILL
    assert terse.system == SKILL.replace("Explain every step at length.", "Answer with the fix only.")
    assert terse.description == "Terse" and checklist.system == CHECKLIST
    assert [c.id for c in spec.cases] == ["bug-0", "bug-1", "bug-2", "bug-3"]
    assert spec.graders[0].kind == "command" and spec.execution.trial_timeout_s == 120
    assert spec.budget.max_variants == 4


async def test_it_runs_and_flags_identical_outputs_across_repeats(tmp_path: Path) -> None:
    report = await run_file(project(tmp_path))
    rates = {v.name: v.pass_rate for v in report.variants}
    assert rates == {"baseline": 0.0, "terse-v1": 1.0, "checklist-v1": 0.0}
    # a shell agent answers the same every time: every cell's 3 repeats are identical
    assert len(report.identical_repeats) == 12 and {r.repeats for r in report.identical_repeats} == {3}


def test_caps_refuse_before_launch_with_the_computed_count(tmp_path: Path) -> None:
    too_many = EXPERIMENT.replace("maxVariants: 4", "maxVariants: 2")
    with pytest.raises(InputError, match="max_variants: expected at most 2 variants; the run has 3"):
        load_experiment(project(tmp_path, too_many))
    capped = EXPERIMENT.replace("maxVariants: 4", "maxTrialsPerRun: 20")
    file = project(tmp_path, capped)
    refused = run_engine("run", str(file), "--store", "st", cwd=tmp_path)
    err = refused.stderr.decode()
    assert refused.returncode == 2 and "3 variants x 4 cases x 3 repeats = 36" in err, err
    assert not (tmp_path / "st").exists()  # nothing launched


def test_a_patch_that_does_not_apply_is_refused(tmp_path: Path) -> None:
    file = project(tmp_path)
    (tmp_path / "variants" / "terse-v1.md").write_text(TERSE.replace(" Write the fix.", " Write a fix."))
    with pytest.raises(InputError, match="terse-v1.md: patch: expected the patch to apply: line 2"):
        load_experiment(file)


def test_create_registers_the_experiment_and_resume_runs_what_was_registered(tmp_path: Path) -> None:
    file = project(tmp_path)
    created = run_engine("create", str(file), "--run-id", "fleet-1", "--json", "--store", "st", cwd=tmp_path)
    assert created.returncode == 0, created.stderr.decode()
    assert json.loads(created.stdout) == {
        "run_id": "fleet-1",
        "experiment": "tighten-coder-skill",
        "status": "pending",
    }
    listed = json.loads(run_engine("list", "--json", "--store", "st", cwd=tmp_path).stdout)
    assert [(r["run_id"], r["status"]) for r in listed] == [("fleet-1", "pending")]
    again = run_engine("create", str(file), "--run-id", "fleet-1", "--store", "st", cwd=tmp_path)
    assert (
        again.returncode == 2 and b"already in the store" in again.stderr and b"Traceback" not in again.stderr
    )
    file.write_text("not front matter any more")  # the registered definition runs, not today's file
    ran = run_engine("run", "--resume", "fleet-1", "--json", "--store", "st", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr.decode()
    report = json.loads(ran.stdout)
    assert report["status"] == "completed" and report["trials_total"] == 3 * 4 * 3


def test_the_rfcs_case_and_variant_fields(tmp_path: Path) -> None:
    file = project(tmp_path)
    cases = [
        {"caseId": f"bug-{i}", "prompt": f"fix bug {i}", "criteria": {"commands": ["true"]}} for i in range(2)
    ]
    (tmp_path / "core-coding-cases.jsonl").write_text("\n".join(json.dumps(c) for c in cases) + "\n")
    file.write_text(
        file.read_text().replace(
            "  - id: checklist-v1\n",
            "  - id: checklist-v1\n    roleName: reviewer\n    skills: [python, tests]\n",
        )
    )
    spec = load_experiment(file)
    assert [c.id for c in spec.cases] == ["bug-0", "bug-1"]
    assert spec.variants[2].flags == {"roleName": "reviewer", "skills": ["python", "tests"]}


def test_a_broken_diff_is_refused_not_taken_as_the_whole_prompt(tmp_path: Path) -> None:
    file = project(tmp_path)
    (tmp_path / "variants" / "terse-v1.md").write_text(
        "--- a/skills/coder.md\n+++ b/skills/coder.md\n@@ garbage @@\n-x\n+y\n"
    )
    with pytest.raises(InputError, match="terse-v1.md: patch: expected unified diff hunks"):
        load_experiment(file)
