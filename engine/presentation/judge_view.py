"""What a trial page shows of a judge beyond its score: its per-criterion scores, read back from its
raw answer (the rubric judge asks for `{"scores": {criterion: 1-10}, "reason": ...}`)."""

from __future__ import annotations

import json


def criterion_scores(raw: str) -> dict[str, str]:
    """A rubric judge's per-criterion scores as its raw answer gave them ({} when it gave none)."""
    start, end = raw.find("{"), raw.rfind("}")
    try:
        value = json.loads(raw[start : end + 1]) if 0 <= start < end else None
    except ValueError:
        return {}
    scores = value.get("scores") if isinstance(value, dict) else None
    return {str(k): str(v) for k, v in scores.items()} if isinstance(scores, dict) else {}
