"""The judge's prompt on the trial page, not only its fingerprint: rebuilt from the experiment's
judge grader, the case and the output (the log keeps a fingerprint, not the prompt), and shown only
when it hashes to the fingerprint the judge was given; a regrade's other grader says so instead."""

from __future__ import annotations

import hashlib
from typing import Any

from engine.actors.graders.judge_prompt import DEFAULT_RUBRIC, judge_prompt
from engine.events.graders import JudgeGraderSpec
from engine.events.spec import ExperimentSpec


def fingerprint(system: str, prompt: str) -> str:
    """As the judge grader takes it of the prompt it sends."""
    return hashlib.blake2b(f"{system}\x00{prompt}".encode(), digest_size=8).hexdigest()


def judge_prompts(spec: ExperimentSpec | None, trial: dict[str, Any]) -> dict[str, dict[str, str]]:
    """{grader name: {system, prompt}} for each judge grade whose prompt could be rebuilt exactly;
    {grader name: {missing}} where the grade has a fingerprint this run's graders do not give."""
    if spec is None or trial.get("output") is None:
        return {}
    case = next((c for c in spec.cases if c.id == trial["case"]), None)
    judges = {g.name or g.kind: g for g in spec.graders if isinstance(g, JudgeGraderSpec)}
    out: dict[str, dict[str, str]] = {}
    for grade in trial["grades"]:
        name, wanted = grade["name"], grade.get("prompt_hash", "")
        if not wanted:
            continue
        grader = judges.get(name)
        if case is not None and grader is not None:
            system, prompt = judge_prompt(case, trial["output"], list(grader.rubric) or DEFAULT_RUBRIC)
            if fingerprint(system, prompt) == wanted:
                out[name] = {"system": system, "prompt": prompt}
                continue
        out[name] = {"missing": "this grade's prompt came from another grader setup (a regrade's)"}
    return out
