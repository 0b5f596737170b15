"""weakincentives' eval vocabulary: `experiments` (a list of {name, overrides_tag, flags, owner,
description}) are engine's variants, `dataset` a JSONL file of `{id, input, expected}` rows, and the
prompt overrides live in `.weakincentives/prompts/overrides/{namespace}/{key}/{tag}.json` (the default
`overrides_dir` when that folder exists beside the file). An evaluator's `passed` decides the trial.
Without a top-level `name`, the experiment is named after its file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.input.compat.common import move

DEFAULT_OVERRIDES = ".weakincentives/prompts/overrides"


def normalize_weakincentives(out: dict[str, Any], file: str, base_dir: Path | None = None) -> dict[str, Any]:
    if isinstance(out.get("experiments"), list) or isinstance(out.get("dataset"), str):
        _evaluators_decide(out)
        # weakincentives names an eval by its file: `code_review.yaml` is the code_review experiment
        out.setdefault("name", Path(file).name.split(".")[0] or "experiment")
    if isinstance(out.get("experiments"), list):
        move(out, ("variants",), out.pop("experiments"), file, "experiments")
    if isinstance(out.get("dataset"), str):
        move(out, ("suite",), {"path": out.pop("dataset")}, file, "dataset")
    variants = out.get("variants") if isinstance(out.get("variants"), list) else []
    tagged = any(isinstance(v, dict) and "overrides_tag" in v for v in variants)
    store = base_dir / DEFAULT_OVERRIDES if base_dir is not None else None
    if tagged and "overrides_dir" not in out and store is not None and store.is_dir():
        out["overrides_dir"] = DEFAULT_OVERRIDES
    return out


def _evaluators_decide(out: dict[str, Any]) -> None:
    """An evaluator's `passed` is its verdict, as in weakincentives: a python grader is a gate (its
    score alone, e.g. 0.5 for half right, would otherwise pass at the 0.5 threshold)."""
    graders = out.get("graders")
    if isinstance(graders, list):
        out["graders"] = [
            {"gate": True, **g} if isinstance(g, dict) and g.get("kind") == "python" else g for g in graders
        ]
