"""Latency between runs of different machines is not a regression: a shared CI pool hands out
runners of other speeds (248 -> 518 ms on a slower runner, the same code). Each run records the
machine it ran on (CPU model, cores); when both runs' machines are known and differ, the p95 latency
rows say so and decide nothing, unless `--latency-across-machines` asks for them. A run logged before
machines were recorded is compared as before."""

from __future__ import annotations

from engine.store.projections.run_state import RunState
from engine.views.compare.gates import MetricDelta

LATENCY = "p95_latency_ms"
NOT_COMPARED = "not compared: different machines"


def machines_apart(base: RunState, cand: RunState, metrics: list[MetricDelta]) -> list[str]:
    """Mark the latency rows of runs from different machines as not compared; the warning saying so
    (none when both ran on one machine)."""
    if base is cand or not base.machine[0] or not cand.machine[0] or base.machine == cand.machine:
        return []
    for m in metrics:
        if m.metric == LATENCY:
            m.regressed, m.direction, m.note = False, "unknown", NOT_COMPARED
    return [
        f"latency {NOT_COMPARED} ({describe(base.machine)} vs {describe(cand.machine)}); "
        "--latency-across-machines compares it"
    ]


def describe(machine: tuple[str, int]) -> str:
    model, cores = machine
    return f"{model}, {cores} cores" if cores else model
