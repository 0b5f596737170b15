"""A run's few facts that history and `report --json` look up by tag: the reports it wrote (by
grading round), the mark a person gave it, and whether it has labels. Kept as a snapshot (see
`store.snapshots`), so finding them costs a lookup, not a walk of the run's index."""

from __future__ import annotations

import msgspec

from engine.events import kinds as k
from engine.store.projection import Projection


class RunHeads(msgspec.Struct):  # not a dataclass: see projections.summary.RunSummary
    run_id: str
    reports: list[tuple[int, str]] = msgspec.field(default_factory=list)  # (grading, report hash), log order
    mark: str = ""  # green | red: the latest `engine mark`
    labelled: bool = False

    def report_hash(self, grading: int | None = None) -> str | None:
        """The latest report written (of that grading round, when given)."""
        found = [h for g, h in self.reports if grading in (None, g)]
        return found[-1] if found else None


def _report(h: RunHeads, e: k.ReportWritten) -> None:
    h.reports.append((e.grading, e.report_hash))


def _mark(h: RunHeads, e: k.RunMarked) -> None:
    h.mark = e.mark


def _label(h: RunHeads, e: k.LabelRecorded) -> None:
    h.labelled = True


HEADS = Projection[RunHeads]({k.ReportWritten: _report, k.RunMarked: _mark, k.LabelRecorded: _label})
