"""How a judge is asked to shape its answer: `answer_format` sends an OpenAI-compatible judge a
response_format built from the answer's JSON Schema; a server that refuses it is asked in words."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.actors.targets.target_protocol import TargetRequest
from engine.api import open_engine, spec_from_dict
from tests.fakes.openai_server import open_fake_openai

SCORES = {"accuracy": 9, "completeness": 9, "clarity": 9, "relevance": 9}


def judge_answer(body: dict[str, Any]) -> str:
    return json.dumps({"scores": SCORES, "reason": "fine"})


def subject(request: TargetRequest) -> str:
    return "Paris"


def judged(url: str, answer_format: str, judges: int = 3) -> Any:
    return spec_from_dict({
        "execution": {"judge_concurrency": judges},
        "name": "format", "target": {"kind": "python", "callable": "subject"},
        "cases": [{"id": f"c{i}", "prompt": "capital of France?"} for i in range(3)],
        "graders": [{"kind": "judge", "answer_format": answer_format,
                     "judge": {"kind": "openai", "base_url": url, "model": "j"}}],
    })  # fmt: skip


@pytest.mark.parametrize(
    ("answer_format", "expected"),
    [
        ("text", None),
        ("json", {"type": "json_object"}),
        ("json_object_schema", "schema"),
        ("json_schema", "json_schema"),
    ],
)
async def test_the_request_carries_the_answer_shape(
    tmp_path: Path, answer_format: str, expected: Any
) -> None:
    async with open_fake_openai(answer=judge_answer) as server:
        async with open_engine(tmp_path, callables={"subject": subject}) as eng:
            report = await eng.run(judged(server.base_url, answer_format))
    assert report.variants[0].scored == 3
    sent = [r.body.get("response_format") for r in server.requests]
    if expected is None:
        assert sent == [None] * 3
    elif expected == "schema":  # llama-cpp-python's form: the schema inside json_object
        assert all(s["type"] == "json_object" for s in sent)
        assert all(set(s["schema"]["properties"]["scores"]["required"]) == set(SCORES) for s in sent)
    elif expected == "json_schema":  # the OpenAI form
        assert all(s["type"] == "json_schema" and s["json_schema"]["schema"]["required"] for s in sent)
    else:
        assert sent == [expected] * 3


async def test_a_server_that_refuses_response_format_is_asked_in_words(tmp_path: Path) -> None:
    def refuse_formats(index: int, body: dict[str, Any]) -> str | None:
        return "400" if "response_format" in body else None

    async with open_fake_openai(answer=judge_answer, faults=refuse_formats) as server:
        async with open_engine(tmp_path, callables={"subject": subject}) as eng:
            # one judge at a time: the refusal is learnt before the next question
            report = await eng.run(judged(server.base_url, "json_schema", judges=1))
    assert report.variants[0].scored == 3  # every output judged
    with_format = [r for r in server.requests if "response_format" in r.body]
    assert len(with_format) == 1 and len(server.requests) == 4  # refused once, then never sent again
