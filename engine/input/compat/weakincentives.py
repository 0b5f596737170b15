"""weakincentives' eval vocabulary: `experiments` (a list of {name, overrides_tag, flags, owner,
description}) are engine's variants, `dataset` a JSONL file of `{id, input, expected}` rows, and the
prompt overrides live in `.weakincentives/prompts/overrides/{namespace}/{key}/{tag}.json` (the default
`overrides_dir` when that folder exists beside the file)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.input.compat.common import move

DEFAULT_OVERRIDES = ".weakincentives/prompts/overrides"


def normalize_weakincentives(out: dict[str, Any], file: str, base_dir: Path | None = None) -> dict[str, Any]:
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
