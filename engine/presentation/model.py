"""The one report every surface renders: the typed RunReport, whatever form it arrives in."""

from __future__ import annotations

from typing import Any

import msgspec

from engine.events.report import RunReport

ReportInput = RunReport | dict[str, Any] | bytes | str


def as_report(report: ReportInput) -> RunReport:
    """The typed report from the stored JSON bytes, a decoded dict (a report written before some
    field existed gets its default) or the struct itself."""
    if isinstance(report, RunReport):
        return report
    if isinstance(report, bytes | str):
        return msgspec.json.decode(report, type=RunReport)
    return msgspec.convert(report, RunReport)
