"""Keystone users bring their spec (agent block, replicas x matrix) and read its figures as they know them."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from engine.api import open_engine
from engine.input.loader import load_experiment
from engine.presentation.formats import export_run
from engine.store.memory import MemoryStore
from engine.views.compare.comparison import compare_runs
from tests.compat.helpers import write_script
from tests.conftest import run_engine

SPEC = """
name: fix-failing-test
agent:
  type: cli
  binary: ./bin/my-agent
  args: ["--model", "{{ matrix.model }}"]
parallelism:
  replicas: 3
  isolation: per_run
  matrix:
    - { name: sonnet, model: claude-sonnet-4-5 }
    - { name: gpt, model: gpt-4o }
resources:
  concurrency_limit: 2
cases:
  - { id: scenario-000, prompt: "fix the failing test in a.py", expected: fixed }
  - { id: scenario-001, prompt: "fix the failing test in b.py", expected: fixed }
graders:
  - { kind: contains }
"""
# the agent reports its tool calls; gpt-4o calls more tools, a third of them failing, and gives up on b.py
AGENT = """prompt=$(cat)
if [ "$2" = "gpt-4o" ]; then calls=9; errors=3; else calls=4; errors=0; fi
printf '{"tool_calls": %s, "tool_errors": %s}' "$calls" "$errors" > "$ENGINE_METRICS_FILE"
case "$2:$prompt" in gpt-4o:*b.py*) echo "gave up";; *) echo fixed;; esac
"""


def project(folder: Path) -> Path:
    write_script(folder / "bin" / "my-agent", AGENT)
    (folder / "spec.yaml").write_text(SPEC)
    return folder / "spec.yaml"


def test_the_agent_block_is_a_command_target(tmp_path: Path) -> None:
    spec = load_experiment(project(tmp_path))
    assert spec.target.kind == "command"
    assert spec.target.command == ["./bin/my-agent", "--model", "{{ matrix.model }}"]  # type: ignore[union-attr]
    assert spec.repeat.count == 3 and spec.execution.concurrency == 2


async def test_tool_figures_verdicts_and_reproducers_in_report_compare_and_export(tmp_path: Path) -> None:
    file = project(tmp_path)
    store = MemoryStore()
    async with open_engine(store) as eng:
        report = await eng.run(load_experiment(file), source=str(file), run_id="ks")
    by_name = {v.name: v for v in report.variants}
    assert (by_name["sonnet"].mean_tool_calls, by_name["sonnet"].tool_success_rate) == (4.0, 1.0)
    assert by_name["gpt"].mean_tool_calls == 9.0 and abs(by_name["gpt"].tool_success_rate - 2 / 3) < 1e-6  # type: ignore[operator]
    verdicts = {(s.variant, s.case): (s.verdict, s.passes, s.runs) for s in report.scenarios}
    assert verdicts == {
        ("sonnet", "scenario-000"): ("pass", 3, 3), ("sonnet", "scenario-001"): ("pass", 3, 3),
        ("gpt", "scenario-000"): ("pass", 3, 3), ("gpt", "scenario-001"): ("fail", 0, 3),
    }  # fmt: skip
    assert [(r.variant, r.case, r.repeat) for r in report.reproducers] == [
        ("gpt", "scenario-001", n) for n in (1, 2, 3)
    ]
    command = report.reproducers[0].command
    assert command == f"engine run {shlex.quote(str(file))} --case scenario-001 --variant gpt --seed 0"
    compared = compare_runs(store, "ks", "ks", variants=("sonnet", "gpt"))
    figures = {m.metric: m for m in compared.metrics}
    assert (
        figures["tool_success_rate"].direction == "worse" and figures["mean_tool_calls"].direction == "worse"
    )
    assert figures["mean_tool_calls"].delta == 5.0
    lines: list[str] = []
    export_run(store, "ks", "jsonl", None, lines.append)
    exported = [json.loads(line) for line in lines]
    assert {t["reproducer"] for t in exported if t["status"] == "fail"} == {command}
    assert all(t["reproducer"] is None for t in exported if t["status"] == "pass")


def test_the_reproducer_reruns_the_failing_scenario_alone(tmp_path: Path) -> None:
    file = project(tmp_path)
    ran = run_engine("run", str(file), "--json", "--run-id", "ks", "--store", "st", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr.decode()
    (reproducer, *_) = json.loads(ran.stdout)["reproducers"]
    _, _, *args = shlex.split(reproducer["command"])  # "engine run" is the CLI below
    again = run_engine("run", *args, "--json", "--store", "st", cwd=tmp_path)
    rerun = json.loads(again.stdout)
    assert rerun["trials_total"] == 3 and [v["name"] for v in rerun["variants"]] == ["gpt"]
    assert [(s["case"], s["verdict"]) for s in rerun["scenarios"]] == [("scenario-001", "fail")]
    shown = run_engine(
        "compare", "ks", "ks", "--base-variant", "sonnet", "--variant", "gpt", "--store", "st", cwd=tmp_path
    )
    assert (
        shown.returncode == 0 and b"tool_success_rate" in shown.stdout and b"mean_tool_calls" in shown.stdout
    )


# each replica leaves a mark in its working folder and reports how many it sees
MARKING_AGENT = """echo "$2" >> marks
printf 'seen %s' "$(wc -l < marks | tr -d ' ')"
"""


async def test_isolation_shared_really_shares_one_workspace_across_replicas(tmp_path: Path) -> None:
    write_script(tmp_path / "bin" / "my-agent", MARKING_AGENT)
    # one trial at a time: two replicas marking at once could both count the same marks
    spec_text = SPEC.replace("isolation: per_run", "isolation: shared").replace(
        "concurrency_limit: 2", "concurrency_limit: 1"
    )
    (tmp_path / "spec.yaml").write_text(spec_text)
    spec = load_experiment(tmp_path / "spec.yaml")
    assert spec.target.workspace == "shared"  # type: ignore[union-attr]
    store = MemoryStore()
    async with open_engine(store) as eng:
        await eng.run(spec, source=str(tmp_path / "spec.yaml"), run_id="shared")
    lines: list[str] = []
    export_run(store, "shared", "jsonl", None, lines.append)
    seen = {}
    for t in map(json.loads, lines):
        seen.setdefault(t["variant"], []).append(t["output"])
    # one folder per variant: its 2 cases x 3 replicas saw 1..6 marks, whatever the order
    assert {v: sorted(outs) for v, outs in seen.items()} == {
        v: [f"seen {n}" for n in range(1, 7)] for v in ("sonnet", "gpt")
    }


async def test_isolation_per_run_gives_every_replica_a_fresh_workspace(tmp_path: Path) -> None:
    write_script(tmp_path / "bin" / "my-agent", MARKING_AGENT)
    (tmp_path / "spec.yaml").write_text(SPEC)
    store = MemoryStore()
    async with open_engine(store) as eng:
        await eng.run(
            load_experiment(tmp_path / "spec.yaml"), source=str(tmp_path / "spec.yaml"), run_id="fresh"
        )
    lines: list[str] = []
    export_run(store, "fresh", "jsonl", None, lines.append)
    assert {json.loads(line)["output"] for line in lines} == {"seen 1"}


def test_an_agent_that_is_not_there_is_refused_before_the_run(tmp_path: Path) -> None:
    missing = [
        ("./bin/nope-agent", "expected an executable agent at"),
        ("no-such-agent-xyz", "expected the agent 'no-such-agent-xyz' on PATH"),
    ]
    for binary, expected in missing:
        (tmp_path / "spec.yaml").write_text(SPEC.replace("./bin/my-agent", binary))
        refused = run_engine("validate", "spec.yaml", cwd=tmp_path)
        err = refused.stderr.decode()
        assert refused.returncode == 2 and "agent.binary" not in err and expected in err, err
        assert len(err.strip().splitlines()) == 1


def test_every_report_format_shows_failing_scenarios_reruns_and_tool_figures(tmp_path: Path) -> None:
    file = project(tmp_path)
    ran = run_engine("run", str(file), "--run-id", "ks", "--store", "st", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr.decode()
    rerun = f"engine run {shlex.quote(str(file))} --case scenario-001 --variant gpt --seed 0"
    markdown = run_engine("report", "ks", "--markdown", "--store", "st", cwd=tmp_path).stdout.decode()
    run_engine("report", "ks", "--html", "r.html", "--store", "st", cwd=tmp_path)
    junit = run_engine("export", "ks", "--format", "junit", "--store", "st", cwd=tmp_path).stdout.decode()
    for shown in (ran.stdout.decode(), markdown, (tmp_path / "r.html").read_text()):
        assert "gpt / scenario-001: fail (0/3 passed)" in shown and "scenario-000: pass" not in shown
        assert "9.00 tool calls per trial" in shown
    assert "rerun: " in markdown and rerun.split(" --case")[1] in markdown
    assert f"rerun: {rerun}" in junit.replace("&quot;", '"').replace("&#x27;", "'")
