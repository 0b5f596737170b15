"""The labelling queue: every trial with an output, the ones a person should see first at the top.

First come the trials where the judges disagree with each other, or a judge with its own repeats
(its scores of the one output spread, or its verdicts on the repeats of the case differ); unlabelled
before labelled within each group, then in variant, case, repeat order.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.store.projections.labels import LabelState, TrialKey


@dataclass(frozen=True, slots=True)
class QueueItem:
    variant: str
    case: str
    repeat: int  # from 1, as people see it
    verdicts: dict[str, bool | None]  # judge -> passed
    label: str  # pass | fail | "" (none yet)
    reasons: tuple[str, ...]  # why it comes first ("judges split", ...)


def label_queue(state: LabelState) -> list[QueueItem]:
    varying = _varying_cells(state)
    items = []
    for key in state.outputs:
        judged = state.judged.get(key)
        verdicts = dict(judged.verdicts) if judged else {}
        reasons = []
        if len({v for v in verdicts.values() if v is not None}) > 1:
            reasons.append("judges split")
        if judged is not None and judged.spread:
            reasons.append("judge repeats differ")
        if key[:2] in varying:
            reasons.append("verdict varies across repeats")
        label = state.label_of(key)
        item = QueueItem(key[0], key[1], key[2] + 1, verdicts, label.verdict if label else "", tuple(reasons))
        items.append(item)
    items.sort(key=lambda i: (not i.reasons, bool(i.label), i.variant, i.case, i.repeat))
    return items


def _varying_cells(state: LabelState) -> set[tuple[str, str]]:
    """(variant, case) cells whose repeats a judge passed and failed."""
    seen: dict[tuple[str, str, str], set[bool]] = {}
    for (variant, case, _), judged in state.judged.items():
        for name, verdict in judged.verdicts.items():
            if verdict is not None:
                seen.setdefault((variant, case, name), set()).add(verdict)
    return {(variant, case) for (variant, case, _), found in seen.items() if len(found) > 1}


def next_unlabelled(items: list[QueueItem], shown: frozenset[TrialKey] = frozenset()) -> QueueItem | None:
    """The first unlabelled trial of the queue but those `shown` (repeat from 0) on the page."""
    for item in items:
        if not item.label and (item.variant, item.case, item.repeat - 1) not in shown:
            return item
    return None
