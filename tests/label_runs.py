"""A run with a judge whose verdicts the test knows, for the labelling tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engine.api import open_engine, spec_from_dict
from tests.fakes.openai_server import open_fake_openai

CASES = 10
JUDGE_PASSES = {f"c{i}" for i in range(6)}  # the judge passes c0..c5 and fails c6..c9
STRICT_FAILS = {"c0", "c1"}  # a second, stricter judge (model "strict") fails these too


def judge_by_case(body: dict[str, Any]) -> str:
    messages = body["messages"]
    if "impartial judge" not in messages[0]["content"]:
        return "4"
    prompt = messages[-1]["content"]
    passes = JUDGE_PASSES - STRICT_FAILS if body.get("model") == "strict" else JUDGE_PASSES
    passed = any(f"(case {case})" in prompt for case in passes)
    return json.dumps({"score": 9 if passed else 2, "reason": "r"})


def judged_spec(base_url: str, repeats: int = 1, strict: bool = False) -> Any:
    target = {"kind": "openai", "base_url": base_url, "model": "m", "max_retries": 0}
    graders: list[dict[str, Any]] = [{"kind": "judge", "name": "judge"}]
    if strict:
        graders.append({"kind": "judge", "name": "strict", "judge": {"model": "strict"}})
    return spec_from_dict({
        "name": "labelled", "seed": 3, "target": target, "repeat": {"count": repeats},
        "cases": [{"id": f"c{i}", "prompt": f"What is 2+2? (case c{i})"} for i in range(CASES)],
        "graders": graders,
    })  # fmt: skip


async def judged_run(store: Path, run_id: str = "lab", repeats: int = 1, strict: bool = False) -> str:
    """A finished run of one variant over CASES cases, graded by one judge (two with `strict`) over
    real HTTP."""
    async with open_fake_openai(answer=judge_by_case) as server:
        async with open_engine(store) as eng:
            report = await eng.run(judged_spec(server.base_url, repeats, strict), run_id=run_id)
    return report.run_id
