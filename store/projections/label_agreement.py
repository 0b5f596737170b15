"""The report's `label_agreement`: every judge grader measured against people's labels."""

from __future__ import annotations

from engine.events import kinds as k
from engine.events.report import JudgeVsPeople, LabelAgreement, LabelDisagreement
from engine.stats.kappa import METHOD, TARGET_WIDTH, cohen_kappa
from engine.store.projections.labels import LabelState, TrialKey

DISAGREEMENTS_KEPT = 200


def label_agreement(state: LabelState, width: float = TARGET_WIDTH) -> LabelAgreement:
    current = state.current()
    stale = sum(1 for key in {label[:3] for label in state.labels} if state.label_of(key) is None)
    judges = [_judge(state, name, current, width) for name in state.judges]
    return LabelAgreement(labels=len(current), stale=stale, method=METHOD, judges=judges)


def _judge(
    state: LabelState, name: str, current: list[tuple[TrialKey, k.LabelRecorded]], width: float
) -> JudgeVsPeople:
    table = {(True, True): 0, (True, False): 0, (False, True): 0, (False, False): 0}  # (judge, people)
    disagreements: list[LabelDisagreement] = []
    for key, label in current:
        judged = state.judged.get(key)
        verdict = None if judged is None else judged.verdicts.get(name)
        if verdict is None:
            continue
        people = label.verdict == "pass"
        table[(verdict, people)] += 1
        if verdict != people and len(disagreements) < DISAGREEMENTS_KEPT:
            disagreements.append(_disagreement(key, verdict, label))
    tp, fp, fn, tn = table[(True, True)], table[(True, False)], table[(False, True)], table[(False, False)]
    figures = cohen_kappa(tp, fp, fn, tn, width)
    return JudgeVsPeople(
        grader=name, labelled=tp + fp + fn + tn, agreement=_r(figures.agreement), kappa=_r(figures.kappa),
        kappa_low=_r(figures.low), kappa_high=_r(figures.high), tp=tp, fp=fp, fn=fn, tn=tn,
        disagreements=disagreements, needs_more=figures.needs_more, target_width=width,
    )  # fmt: skip


def _disagreement(key: TrialKey, verdict: bool, label: k.LabelRecorded) -> LabelDisagreement:
    variant, case, repeat = key
    judge = "pass" if verdict else "fail"
    return LabelDisagreement(
        variant=variant, case=case, repeat=repeat + 1, judge=judge, label=label.verdict, note=label.note
    )


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 6)
