"""Run history: every run of one experiment with its headline figures, and which runs are green.

A projection over the log: each run's summary (lifecycle events only) and the few figures of its stored
report (kept beside it: store.report_digest; the report itself when they are not), so a history costs
the runs it lists, not their sizes. A run is green
when `engine mark RUN green` said so, or, unless marked red, when it completed with its error rate
within the limit and no candidate significantly worse than its baseline. A run of some cases or
variants (`engine run --case/--variant`) is a partial rerun: green only when marked so, and left out
of the history unless every run is asked for.
"""

from __future__ import annotations

import time

import msgspec

from engine.events.outcome import outcome_word
from engine.runtime.run_status import summarize
from engine.store.contract import EventStore
from engine.store.kept.read import RUN_HEADS, load, run_ids
from engine.store.kept.report_digest import ReportDigest, report_digest
from engine.store.projections.summary import RunSummary

METRICS = ("pass_rate", "mean_score", "cost_usd", "p95_latency_ms")


class HistoryPoint(msgspec.Struct, kw_only=True):
    run_id: str
    status: str  # the word every surface shows: "failed" when every trial errored (events.outcome)
    started: float
    spec_hash: str = ""
    variant: str = ""  # whose figures these are
    pass_rate: float | None = None
    mean_score: float | None = None
    cost_usd: float | None = None
    p95_latency_ms: float | None = None
    green: bool = False
    mark: str = ""  # green | red, when a person marked it
    narrowed_by: list[str] = []  # "--case", "--variant": a partial rerun


def history(
    log: EventStore, experiment: str, variant: str | None = None, narrowed: bool = False
) -> list[HistoryPoint]:
    """The experiment's runs, oldest first; figures of `variant` (default: each run's baseline).
    `narrowed`: with the partial reruns (--case/--variant) too."""
    summaries = [s for s in (summarize(log, r) for r in run_ids(log)) if s.experiment == experiment]
    summaries = [s for s in summaries if narrowed or not s.narrowed_by]
    summaries.sort(key=lambda s: (s.started_ts, s.run_id))
    return [_point(log, s, variant) for s in summaries]


def _point(log: EventStore, summary: RunSummary, variant: str | None) -> HistoryPoint:
    run_id, status = summary.run_id, summary.status
    heads = load(log, RUN_HEADS, run_id)
    point = HistoryPoint(run_id=run_id, status=status, started=summary.started_ts, mark=heads.mark,
                         narrowed_by=list(summary.narrowed_by))  # fmt: skip
    found = heads.report_hash()
    if found is None:  # live or killed: no figures until it writes its report
        return point
    report = report_digest(log, run_id, found)
    point.spec_hash, point.status = report.spec_hash, digest_word(report, status)
    chosen = next((v for v in report.variants if v.name == variant), None) if variant else None
    chosen = chosen or (report.variants[0] if report.variants else None)
    if chosen is not None:
        point.variant, point.mean_score, point.cost_usd = chosen.name, chosen.mean_score, chosen.cost_usd
        point.pass_rate = round(chosen.passed / chosen.scored, 6) if chosen.scored else None
        point.p95_latency_ms = chosen.latency_ms.p95
    worse = any((c.significant and (c.delta or 0) < 0) or c.more_errors for c in report.comparisons)
    automatic = status == "completed" and not report.error_rate_exceeded and not worse
    automatic = automatic and not summary.narrowed_by  # a partial rerun proves nothing of the whole
    point.green = heads.mark == "green" or (heads.mark != "red" and automatic)
    return point


def run_outcome(log: EventStore, run_id: str, status: str) -> str:
    """The run's status word: its stored report's (which knows its errors), else its lifecycle status."""
    found = load(log, RUN_HEADS, run_id).report_hash()
    return status if found is None else digest_word(report_digest(log, run_id, found), status)


def digest_word(report: ReportDigest, status: str) -> str:
    errors = sum(v.errors for v in report.variants)
    return outcome_word(report.status or status, report.trials_done, errors)


def last_green(log: EventStore, experiment: str, before: str) -> str | None:
    """The newest green run of the experiment started before run `before` (itself excluded)."""
    points = history(log, experiment, narrowed=True)  # a partial rerun marked green is one
    cutoff = next((p.started for p in points if p.run_id == before), time.time())
    greens = [p for p in points if p.green and p.run_id != before and p.started <= cutoff]
    return greens[-1].run_id if greens else None


def sparkline(values: list[float | None]) -> str:
    """One character per run: ▁ lowest to █ highest, a space where a run has no figure."""
    bars = "▁▂▃▄▅▆▇█"
    present = [v for v in values if v is not None]
    if not present:
        return " " * len(values)
    low, high = min(present), max(present)
    scale = (high - low) or 1.0
    return "".join(" " if v is None else bars[round((v - low) / scale * (len(bars) - 1))] for v in values)
