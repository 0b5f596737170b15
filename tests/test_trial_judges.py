"""The trial page shows the judges whole: a rubric judge's score per criterion, and for a pairwise
judge which output was shown as A and which as B, and the verdict. Real runs with the judges on a
real-socket fake OpenAI server; the page from a real `engine serve`."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx

from engine.api import open_engine, spec_from_dict
from engine.events import kinds as k
from engine.events.codec import decode
from engine.store.open import open_event_log
from tests.conftest import SAFETY_S
from tests.fakes.openai_server import open_fake_openai
from tests.serve_helpers import serving


def judge(body: dict[str, Any]) -> str:
    prompt = body["messages"][-1]["content"]
    if "<response_a>" in prompt:  # the pairwise judge: the GOOD answer wins wherever it is shown
        a = re.search(r"<response_a>(.*?)</response_a>", prompt, re.S)
        return json.dumps({"winner": "A" if a and "GOOD" in a.group(1) else "B", "reason": "GOOD is better"})
    return json.dumps({"scores": {"accuracy": 9, "tone": 4}, "reason": "right, but curt"})


def subject(request: Any) -> str:
    return request.variant.params.get("answer", "plain answer") + f" to {request.case.id}"


def spec(url: str) -> Any:
    judge_target = {"kind": "openai", "base_url": url, "model": "judge-1"}
    return spec_from_dict({
        "name": "judged", "seed": 7, "target": {"kind": "python", "callable": "subject"},
        "variants": [{"name": "base"}, {"name": "better", "params": {"answer": "GOOD answer"}}],
        "cases": [{"id": f"c{i}", "prompt": f"question {i}"} for i in range(3)],
        "repeat": {"count": 2, "early_exit": False},
        "graders": [
            {"kind": "judge", "name": "rubric", "judge": judge_target,
             "rubric": [{"name": "accuracy", "weight": 2}, {"name": "tone", "weight": 1}]},
            {"kind": "pairwise", "name": "side_by_side", "judge": judge_target},
        ],
    })  # fmt: skip


async def test_the_trial_page_shows_criteria_and_the_pairwise_order_and_verdict(tmp_path: Path) -> None:
    async with open_fake_openai(answer=judge) as server:
        async with open_engine(tmp_path / "st", callables={"subject": subject}) as eng:
            await eng.run(spec(server.base_url), run_id="j1")
    with open_event_log(tmp_path / "st") as log:
        verdicts = [decode(d) for _, d in log.read_run("j1", tags={"pairwise.judged"})]
    shown = next(e for e in verdicts if isinstance(e, k.PairwiseJudged) and e.case == "c1" and e.repeat == 0)
    with serving(tmp_path / "st") as url:
        page = httpx.get(f"{url}/runs/j1/trial", params={"case": "c1", "variant": "better"}, timeout=SAFETY_S)
    first = page.text.split('class="repeat"')[1]  # repeat 1's block
    assert "rubric per criterion: " in first and "accuracy 9</span>" in first and "tone 4</span>" in first
    order = "A: better · B: base" if shown.candidate_position == "A" else "A: base · B: better"
    block = first.split('class="grades pairwise"')[1]  # one block per verdict: readable three repeats wide
    assert "<b>side_by_side</b> against base" in block and order in block
    assert '<span class="verdict">candidate (better wins)' in block and "judge-1" in block
