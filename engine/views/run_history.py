"""The candidate experiment's earlier runs, whose spread sets the run-to-run margins of `engine
compare`'s latency and cost gates (stats/run_spread.py says how)."""

from __future__ import annotations

from engine.runtime.run_status import summarize
from engine.store.contract import EventStore
from engine.store.kept.read import RUN_HEADS, load, run_ids
from engine.store.kept.report_digest import report_digest


def earlier_figures(log: EventStore, base_id: str, cand_id: str) -> dict[str, list[tuple[float, float]]]:
    """Per variant, (p95 ms, cost per trial) of each completed run of the candidate's experiment that
    started before it, the two compared runs left out."""
    cand = summarize(log, cand_id)
    found: dict[str, list[tuple[float, float]]] = {}
    for run_id in run_ids(log):  # from the snapshots: the log's own list walks its index
        if run_id in (base_id, cand_id):
            continue
        s = summarize(log, run_id)
        if s.experiment != cand.experiment or s.status != "completed" or s.started_ts >= cand.started_ts:
            continue
        report = load(log, RUN_HEADS, run_id).report_hash()
        if report is None:
            continue
        for v in report_digest(log, run_id, report).variants:
            if v.trials and v.latency_ms.p95 is not None:
                found.setdefault(v.name, []).append((v.latency_ms.p95, v.cost_usd / v.trials))
    return found
