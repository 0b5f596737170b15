"""A case's pairwise verdicts, for its trial page: which side the candidate was shown on (A or B), who
won, and the judge's reason, model and raw answer, per candidate variant and repeat."""

from __future__ import annotations

from typing import Any

import msgspec

from engine.events import kinds as k
from engine.events.codec import decode
from engine.store.contract import EventStore

PairwiseKey = tuple[str, int]  # (candidate variant, repeat from 0)


def case_pairwise(log: EventStore, run_id: str, case: str) -> dict[PairwiseKey, list[dict[str, Any]]]:
    """The case's verdicts by (variant, repeat); a later verdict of one grader (a regrade) replaces an
    earlier one."""
    latest: dict[tuple[str, str, int], k.PairwiseJudged] = {}
    for _, data in log.read_run(run_id, tags={"pairwise.judged"}):
        event = decode(data)
        if isinstance(event, k.PairwiseJudged) and event.case == case:
            latest[(event.grader, event.variant, event.repeat)] = event
    out: dict[PairwiseKey, list[dict[str, Any]]] = {}
    for (_, variant, repeat), event in latest.items():
        shown = msgspec.structs.asdict(event)
        shown["baseline_position"] = "B" if event.candidate_position == "A" else "A"
        out.setdefault((variant, repeat), []).append(shown)
    return out
