"""A sequential run ([stopping] rule = "sequential"): the repeats run in rounds, and after each round
a look at the comparisons decides whether the answer is already clear (see stats.sequential_looks).

Each look is an event, so a resumed run takes up the rounds where it stopped and never decides a look
twice; the report judges significance at the level of the look the run stopped at.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from pathlib import Path

from engine.events import kinds as k
from engine.events.spec import ExperimentSpec, VariantSpec
from engine.runtime.pipeline import Pipeline
from engine.runtime.plan import build_plan
from engine.runtime.workers import Workers
from engine.stats.sequential_looks import look_decision, look_level
from engine.store.projections.report_builder import build_report


async def run_sequential(
    spec: ExperimentSpec,
    run_id: str,
    variants: list[VariantSpec],
    workers: Workers,
    pipe: Pipeline,
    load_output: Callable[[str], str],
    base_dir: Path | None = None,
) -> str:
    assert spec.stopping is not None
    looks = spec.stopping.looks
    for look in range(1, looks + 1):
        repeats = math.ceil(spec.repeat.count * look / looks)
        plan = build_plan(spec, run_id, variants, load_output, repeats=repeats, base_dir=base_dir)
        reason = await workers.run(plan)
        if reason != "completed":
            return reason  # a budget, a cancel or an unreachable target ended it first
        decided = _decided(pipe, look) or await _decide(spec, run_id, pipe, look, repeats)
        if decided.stop:
            return "completed"
    return "completed"


def _decided(pipe: Pipeline, look: int) -> k.LookDecided | None:
    return next((e for e in pipe.state.looks if e.look == look), None)


async def _decide(
    spec: ExperimentSpec, run_id: str, pipe: Pipeline, look: int, repeats: int
) -> k.LookDecided:
    assert spec.stopping is not None
    looks = spec.stopping.looks
    level = look_level(spec.stopping.alpha, look, looks)
    report = build_report(pipe.state)
    comparisons = [(c.p_value_adjusted, c.delta) for c in report.comparisons]
    event = k.LookDecided(
        run_id=run_id, ts=time.time(), look=look, looks=looks, repeats=repeats, level=level,
        stop=look_decision(comparisons, level, look, looks),
    )  # fmt: skip
    await pipe.write_and_wait([event])
    return event
