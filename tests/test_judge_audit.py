"""`engine judge-audit`: the run's judge asked again, over real HTTP, about a sample of its outputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engine.api import open_engine, spec_from_dict
from engine.runtime.judge_audit import judge_audit
from tests.conftest import run_engine
from tests.fakes.openai_server import open_fake_openai
from tests.test_cli_run import experiment


def drifting(seen: dict[str, int]) -> Any:
    """Subject answers '4'; the judge gives 9 the first time it sees a prompt, then 9 or 3 by case."""

    def answer(body: dict[str, Any]) -> str:
        messages = body["messages"]
        if "impartial judge" not in messages[0]["content"]:
            return "4"
        prompt = messages[-1]["content"]
        seen[prompt] = seen.get(prompt, 0) + 1
        moody = seen[prompt] > 1 and any(f"case c{i}" in prompt for i in (0, 1, 2))
        return json.dumps({"score": 3 if moody else 9, "reason": "r"})

    return answer


async def test_an_audit_regrades_a_sample_and_counts_what_changed(tmp_path: Path) -> None:
    seen: dict[str, int] = {}
    async with open_fake_openai(answer=drifting(seen)) as server:
        target = {"kind": "openai", "base_url": server.base_url, "model": "m", "max_retries": 0}
        spec = spec_from_dict({
            "name": "audited", "seed": 2, "target": target,
            "cases": [{"id": f"c{i}", "prompt": f"What is 2+2? (case c{i})"} for i in range(8)],
            "graders": [{"kind": "judge"}],
        })  # fmt: skip
        async with open_engine(tmp_path / "st") as eng:
            report = await eng.run(spec)
            calls_before = len(server.requests)
            audit = await judge_audit(eng.log, report.run_id, sample=8)
    assert report.variants[0].mean_score == round(8 / 9, 6)
    assert len(server.requests) - calls_before == 8  # the judge only: the subject was never called again
    (judge,) = audit.judges
    assert judge.sampled == 8 and judge.same_score == 5 and judge.pass_flips == 3
    assert judge.max_abs_change == round(6 / 9, 6) and judge.unparseable == 0


def test_an_audit_of_a_run_without_a_judge_says_so(tmp_path: Path, write_experiment) -> None:
    file = write_experiment(experiment(cases=2, repeats=1))
    assert (
        run_engine("run", str(file), "-q", "--run-id", "plain", "--store", "st", cwd=tmp_path).returncode == 0
    )
    done = run_engine("judge-audit", "plain", "--store", "st", cwd=tmp_path)
    assert done.returncode == 2 and b"run plain has no judge grader to audit" in done.stderr


async def test_an_audit_of_a_dead_judge_names_the_refused_connection_and_exits_1(tmp_path: Path) -> None:
    async with open_fake_openai(answer=drifting({})) as server:
        target = {"kind": "openai", "base_url": server.base_url, "model": "m", "max_retries": 0}
        spec = spec_from_dict({
            "name": "audited", "seed": 2, "target": target,
            "cases": [{"id": f"c{i}", "prompt": f"What is 2+2? (case c{i})"} for i in range(3)],
            "graders": [{"kind": "judge"}],
        })  # fmt: skip
        async with open_engine(tmp_path / "st") as eng:
            report = await eng.run(spec)
        address = server.base_url.split("//")[1].split("/")[0]
    # the server is gone: the judge's port refuses connections
    done = run_engine("judge-audit", report.run_id, "--store", "st", cwd=tmp_path)
    line = done.stderr.decode().strip()
    assert done.returncode == 1 and len(line.splitlines()) == 1, line
    assert "judge-audit: judge 'judge'" in line and "refused" in line and address in line
