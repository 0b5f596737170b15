"""What the server does once its port is bound, so that a person's first page does not pay for it.

A first comparison in a fresh process cost more than the next (benchmarks/README.md#in-code-web): msgspec
builds its decoder of a run state (a few hundred nested types) on the first decode, and numpy's random
generator, its percentile and unique, and the statistics' modules run their first calls. A comparison of two
tiny runs in memory makes all of those calls on real code paths (kept states, their decode, the report,
every gate's statistics), in a worker thread, before anyone asks.
"""

from __future__ import annotations

from pathlib import Path

from engine.events import kinds as k
from engine.events.codec import encode
from engine.events.kinds import TAG_BY_TYPE
from engine.input.loader import spec_from_raw
from engine.store.memory import MemoryStore
from engine.views.compare.comparison import RunComparison, compare_runs

_SPEC = {
    "name": "warm-up",
    "target": {"kind": "local"},
    "variants": [{"name": "a"}, {"name": "b"}],
    "cases": [{"id": f"c{i}", "prompt": "p", "expected": "x"} for i in range(3)],
    "repeat": {"count": 2},
}


def warm_statistics() -> RunComparison:
    """Compare two tiny runs held in memory (the server drops the result)."""
    store = MemoryStore()
    spec = spec_from_raw(dict(_SPEC), "<warm-up>", Path.cwd())
    for run_id, shift in (("base", 0), ("cand", 1)):
        events = _run(run_id, spec, shift)
        store.append([(e.run_id, TAG_BY_TYPE[type(e)], encode(e)) for e in events])
    return compare_runs(store, "base", "cand")


def _run(run_id: str, spec: k.ExperimentSpec, shift: int) -> list[k.Event]:
    trials = [(v.name, c.id, r) for v in spec.variants for c in spec.cases for r in range(spec.repeat.count)]
    events: list[k.Event] = [
        k.RunStarted(run_id=run_id, ts=1.0, experiment=spec.name, trials_total=len(trials)),
        k.ExperimentDefined(run_id=run_id, ts=1.0, spec=spec, spec_hash=f"warm-{run_id}"),
        *(k.VariantProposed(run_id=run_id, ts=1.0, variant=v, index=i) for i, v in enumerate(spec.variants)),
    ]
    for i, (variant, case, repeat) in enumerate(trials):
        key = {"run_id": run_id, "ts": 2.0, "variant": variant, "case": case, "repeat": repeat}
        passed = (i + shift) % 3 != 0
        events += [
            k.TrialStarted(**key),
            k.TrialCompleted(**key, output_hash=f"{i:064x}", latency_ms=10.0 + i, cost_usd=0.001 * i),
            k.TrialGraded(**key, score=float(passed), passed=passed),
        ]
    return [*events, k.RunCompleted(run_id=run_id, ts=3.0, status="completed")]
