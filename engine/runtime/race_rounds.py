"""A race ([stopping] rule = "race"): the cases run in rounds, every surviving variant on the same
ones, and after each round the variants clearly worse than the leader are dropped (stats.racing).

The case order is drawn once from the run's seed, so the rounds are the same on resume. Each round's
decision is logged (race.round_decided, with a variant.eliminated per drop) before the next round is
scheduled; a resumed race reads its decided rounds back and never decides one twice, so it makes the
same eliminations as an uninterrupted run.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from pathlib import Path

from engine.events import kinds as k
from engine.events.spec import CaseSpec, ExperimentSpec, VariantSpec
from engine.runtime.pipeline import Pipeline
from engine.runtime.plan import build_plan
from engine.runtime.workers import Workers
from engine.stats.racing import decide_round, race_threshold
from engine.store.projections.race_report import race_values


def race_order(spec: ExperimentSpec) -> list[CaseSpec]:
    """The cases in the race's order: shuffled by the seed, so a round is a fair sample of the suite."""
    cases = list(spec.cases)
    random.Random(f"race:{spec.seed}").shuffle(cases)
    return cases


def round_cases(total: int, round_no: int, rounds: int) -> int:
    return math.ceil(total * round_no / rounds)


def round_sizes(spec: ExperimentSpec, rounds: int) -> list[int]:
    """The cases each round will have run, for the threshold (stats.racing.race_threshold): a
    sign-flip race does not charge a round too small to drop; a cost-per-pass race (a t statistic)
    charges every round."""
    assert spec.stopping is not None
    if spec.stopping.objective == "cost_per_pass":
        return []
    return [round_cases(len(spec.cases), r, rounds) for r in range(1, rounds + 1)]


async def run_race(
    spec: ExperimentSpec,
    run_id: str,
    variants: list[VariantSpec],
    workers: Workers,
    pipe: Pipeline,
    load_output: Callable[[str], str],
    base_dir: Path | None = None,
) -> str:
    assert spec.stopping is not None
    rounds = spec.stopping.rounds
    order = race_order(spec)
    survivors = [v.name for v in variants]
    for round_no in range(1, rounds + 1):
        count = round_cases(len(order), round_no, rounds)
        racing = [v for v in variants if v.name in survivors]
        plan = build_plan(spec, run_id, racing, load_output, base_dir=base_dir)
        plan.narrow(order[:count])
        reason = await workers.run(plan)
        if reason != "completed":
            return reason  # a budget, a cancel or an unreachable target ended it first
        decided = _decided(pipe, round_no) or await _decide(
            spec, run_id, pipe, (round_no, len(variants)), survivors, order[:count]
        )
        survivors = list(decided.survivors)
        if decided.stop:
            break
    return "completed"


def _decided(pipe: Pipeline, round_no: int) -> k.RaceRoundDecided | None:
    return next((e for e in pipe.state.race_rounds if e.round == round_no), None)


async def _decide(
    spec: ExperimentSpec,
    run_id: str,
    pipe: Pipeline,
    position: tuple[int, int],
    survivors: list[str],
    cases: list[CaseSpec],
) -> k.RaceRoundDecided:
    """Decide round `position[0]` of a race that started with `position[1]` variants."""
    assert spec.stopping is not None
    stopping = spec.stopping
    round_no, started_with = position
    sizes = round_sizes(spec, stopping.rounds)
    threshold = race_threshold(stopping.alpha, stopping.rounds, started_with, stopping.protect, sizes)
    values = race_values(pipe.state, survivors, [c.id for c in cases], stopping.objective)
    outcome = decide_round(values, survivors, threshold, stopping.min_improvement)
    dropped = {d.variant for d in outcome.drops}
    left = [v for v in survivors if v not in dropped]
    now = time.time()
    eliminated = [
        k.VariantEliminated(
            run_id=run_id, ts=now, variant=d.variant, round=round_no, lost_to=d.lost_to, delta=_num(d.delta),
            p_value=_num(d.p_value), threshold=threshold, cases=len(values[d.variant]),
        )
        for d in outcome.drops
    ]  # fmt: skip
    stop = "one_left" if len(left) == 1 else "equivalent" if outcome.equivalent else ""
    if not stop and round_no == stopping.rounds:
        stop = "max"
    standings = [
        k.RaceStanding(variant=s.variant, mean=_num(s.mean), lo=s.lo, hi=s.hi, cases=s.cases)
        for s in outcome.standings
    ]
    decided = k.RaceRoundDecided(
        run_id=run_id, ts=now, round=round_no, rounds=stopping.rounds, cases=len(cases), threshold=threshold,
        leader=outcome.leader, survivors=left, standings=standings, stop=stop,  # type: ignore[arg-type]
    )  # fmt: skip
    await pipe.write_and_wait([*eliminated, decided])
    return decided


def _num(value: float) -> float:
    """A finite figure for the log (an infinite cost per pass is recorded as the largest float)."""
    if math.isinf(value):
        return math.copysign(1.7976931348623157e308, value)
    return round(value, 12)
