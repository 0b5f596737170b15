"""People's labels in a report, for every format: each judge against the labels, and where they differ.

People are taken as the truth and a pass is a positive: FP counts passes the judge gave that people
failed, FN fails the judge gave that people passed.
"""

from __future__ import annotations

from engine.events.report import GroundTruth, JudgeVsPeople, LabelAgreement, RunReport
from engine.presentation.report.numbers import fmt

TITLE = "Judges against people's labels"
LABELS_HEADER = [
    "judge", "labelled", "agreement", "kappa", "kappa 95% CI", "TP", "FP", "FN", "TN", "more labels",
]  # fmt: skip
# in a terminal the judge's name and the "needs N more" sentence fold; the figures never do
TEXT_COLUMNS = frozenset({0, 9})
MAX_DISAGREEMENTS = 20


def label_rows(section: LabelAgreement | None) -> list[list[str]]:
    return [
        [
            j.grader, str(j.labelled), fmt(j.agreement), fmt(j.kappa), _interval(j.kappa_low, j.kappa_high),
            str(j.tp), str(j.fp), str(j.fn), str(j.tn), more_labels(j),
        ]
        for j in (section.judges if section else [])
    ]  # fmt: skip


def more_labels(judge: JudgeVsPeople) -> str:
    if not judge.needs_more:
        return "enough"
    return f"needs {judge.needs_more} more for an interval of width {judge.target_width:g}"


def _interval(low: float | None, high: float | None) -> str:
    return "-" if low is None or high is None else f"[{low:.2f}, {high:.2f}]"


def label_lines(section: LabelAgreement | None, truth: GroundTruth | None = None) -> list[str]:
    """The labels counted, each disagreement (the first few), and a grading round made from labels."""
    lines: list[str] = []
    if section:
        stale = f"; {section.stale} of outputs no longer the trial's" if section.stale else ""
        lines.append(f"{section.labels} labelled outputs{stale}; people are the truth, a pass is a positive")
        for judge in section.judges:
            lines += _disagreement_lines(judge)
    if truth:
        lines.append(
            f"grading round from labels: {truth.from_labels} trials took people's verdict, "
            f"{truth.from_judges} kept the judges'"
        )
    return lines


def _disagreement_lines(judge: JudgeVsPeople) -> list[str]:
    found = judge.disagreements
    lines = [
        f"{judge.grader} vs label: {d.variant} / {d.case} repeat {d.repeat}: "
        f"judge {d.judge}, label {d.label}" + (f" ({d.note})" if d.note else "")
        for d in found[:MAX_DISAGREEMENTS]
    ]
    if len(found) > MAX_DISAGREEMENTS:
        lines.append(f"{judge.grader}: ...and {len(found) - MAX_DISAGREEMENTS} more disagreements")
    return lines


def has_labels(r: RunReport) -> bool:
    return r.label_agreement is not None or r.ground_truth is not None
