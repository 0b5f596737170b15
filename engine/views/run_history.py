"""The candidate experiment's earlier runs, whose spread sets the run-to-run margins of `engine
compare`'s latency and cost gates (stats/run_spread.py says how)."""

from __future__ import annotations

import msgspec

from engine.runtime.run_status import summarize
from engine.store.contract import EventStore
from engine.store.snapshots import run_ids
from engine.views.queries import stored_report


class _Latency(msgspec.Struct):
    p95: float | None = None


class _Variant(msgspec.Struct):
    name: str
    trials: int = 0
    cost_usd: float = 0.0
    latency_ms: _Latency = msgspec.field(default_factory=_Latency)


class _Report(msgspec.Struct):
    """The fields the margins read (the rest is skipped while decoding)."""

    variants: list[_Variant] = []


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
        data = stored_report(log, run_id)
        if data is None:
            continue
        for v in msgspec.json.decode(data, type=_Report).variants:
            if v.trials and v.latency_ms.p95 is not None:
                found.setdefault(v.name, []).append((v.latency_ms.p95, v.cost_usd / v.trials))
    return found
