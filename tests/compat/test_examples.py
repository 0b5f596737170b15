"""The README's "Coming from ..." walk-throughs, run as written: each tool's example under examples/ gives
the verdicts the README shows (Zeph's against the fake OpenAI server standing in for Ollama)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import trio

from engine.errors import InputWarning
from tests.compat.helpers import run_file
from tests.conftest import ROOT, run_engine, warnings_in
from tests.fakes.openai_server import open_fake_openai

EXAMPLES = ROOT / "examples"


def copy_of(name: str, tmp_path: Path) -> Path:
    """The example in a folder of its own (promote and auto_apply write into it)."""
    return Path(shutil.copytree(EXAMPLES / name, tmp_path / name))


def run_json(cwd: Path, *args: str) -> dict[str, Any]:
    done = run_engine(*args, "--json", "--store", "st", cwd=cwd)
    assert done.returncode == 0, done.stderr.decode()
    return json.loads(done.stdout)


def rates(report: dict[str, Any]) -> dict[str, float]:
    return {v["name"]: v["pass_rate"] for v in report["variants"]}


def ollama_stand_in(body: dict[str, Any]) -> str:
    """qwen3:8b answers precisely when cool and rambles when hot; qwen3:14b, the judge, scores that."""
    if body["model"] == "qwen3:14b":
        text = str(body["messages"][-1]["content"])
        score = 9 if "<subject_response>Precisely" in text else 4
        names = ("accuracy", "completeness", "clarity", "relevance")
        return json.dumps({"scores": {n: score for n in names}, "reason": "checked"})
    if float(body.get("temperature", 0.7)) <= 0.5:
        return "Precisely: the key facts, in order."
    return "Well, there are many ways to look at this, and it depends."


async def test_zeph(tmp_path: Path) -> None:
    folder = copy_of("zeph", tmp_path)
    config = folder / "config.toml"
    async with open_fake_openai(answer=ollama_stand_in) as server:
        root = server.base_url.removesuffix("/v1")
        config.write_text(config.read_text().replace("http://localhost:11434", root))
        with pytest.warns(InputWarning, match=r"not read: \[agent\], \[memory\], \[tools\]"):
            report = await run_file(config)
    assert report.status == "completed", report.stop_reason
    assert [(v.parameter, v.value, v.accepted) for v in report.variations] == [
        ("temperature", 0.6, False), ("temperature", 0.8, False),
        ("temperature", 0.5, True), ("temperature", 0.4, False),
    ]  # fmt: skip
    assert {r.body["model"] for r in server.requests} == {"qwen3:8b", "qwen3:14b"}
    assert report.variations[2].p_value == pytest.approx(1 / 256, abs=1e-6)  # 8 of 8 cases better (mid-p)


def test_agents_fleet(tmp_path: Path) -> None:
    folder = copy_of("agents-fleet", tmp_path)
    report = run_json(folder, "run", "tighten-coder.experiment.md", "--run-id", "fleet-demo")
    assert rates(report) == {"baseline": 0.0, "terse-v1": pytest.approx(23 / 24), "checklist-v1": 0.0}
    assert report["winner"] == "terse-v1" and report["winner_significant"]
    flaky = [s for s in report["scenarios"] if s["verdict"] == "flaky"]
    assert [(s["variant"], s["case"]) for s in flaky] == [("terse-v1", "unclosed-file")]
    promoted = run_engine("promote", "fleet-demo", "--to", "skills/coder.md", "--store", "st", cwd=folder)
    assert promoted.returncode == 0, promoted.stderr.decode()
    assert (folder / "skills" / "coder.md").read_text().endswith("Answer with the fixed line only.\n")


def test_agentv(tmp_path: Path) -> None:
    folder = copy_of("agentv", tmp_path)
    done = run_engine("run", "--run-id", "docs", "--json", "--store", "st", cwd=folder)
    assert done.returncode == 0, done.stderr.decode()
    warnings = [line for line in warnings_in(done.stderr) if "assertions" in line]
    assert len(warnings) == 1, warnings
    assert warnings[0].endswith("assertions: not run (no engine grader for them): latency")
    assert rates(json.loads(done.stdout)) == {"baseline": 1.0}
    without = run_json(folder, "run", "experiments/without-docs.yaml", "--run-id", "no-docs")
    assert rates(without) == {"baseline": 0.0}
    compared = run_json(folder, "compare", "no-docs", "docs")
    (pass_rate,) = [m for m in compared["metrics"] if m["metric"] == "pass_rate"]
    assert (pass_rate["baseline"], pass_rate["candidate"]) == (0.0, 1.0)
    assert not (folder / "AGENTS.md").exists()  # each trial's workspace had its own copy


def test_weakincentives(tmp_path: Path) -> None:
    folder = copy_of("weakincentives", tmp_path)
    report = run_json(folder, "run", "experiment.yaml", "--run-id", "wink")
    assert rates(report) == {"baseline": 0.0, "concise-prompts": 1.0, "v3-prompts": 0.0}
    compared = run_json(
        folder, "compare", "wink", "wink", "--base-variant", "baseline", "--variant", "concise-prompts"
    )
    (pass_rate,) = [m for m in compared["metrics"] if m["metric"] == "pass_rate"]
    assert (pass_rate["baseline"], pass_rate["candidate"]) == (0.0, 1.0)


def test_every_tool_example_is_walked_through_in_the_readme() -> None:
    readme = (ROOT / "README.md").read_text()
    for name in ("zeph", "agents-fleet", "agentv", "weakincentives"):
        assert (EXAMPLES / name).is_dir() and f"examples/{name}" in readme, name


_ = trio  # the Zeph example runs on trio (pytest-trio), its fake server in the same loop
