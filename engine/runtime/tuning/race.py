"""A tuning session that races its candidates ([stopping] rule = "race" with kind = "tune").

Each candidate meets the current best over the cases in rounds (the race's seeded case order, so
both run the same cases and a resumed session the same rounds). After a round, a candidate
significantly worse than the best (paired, one-sided, p below alpha / rounds: Bonferroni over the
rounds, stats.racing) is dropped: a `variant.eliminated` event and its rejection are logged together
and it gets no more trials. A candidate that survives every round has run every case, and the
session's own accept rule (min_improvement, significance, extra repeats on a close call) decides
it as it would without the race: the race only ever rejects early, it never accepts.

Only rounds that drop are logged. A round that keeps the candidate is decided again on resume, from
the same trials (a round's decision reads only its own cases), so it keeps it again.
"""

from __future__ import annotations

import time
from fractions import Fraction

from engine.events import kinds as k
from engine.events.spec import ExperimentSpec, VariantSpec
from engine.runtime.plan import build_plan
from engine.runtime.race_rounds import race_order, round_cases, round_sizes
from engine.runtime.tuning.tuning_run import TuneRun
from engine.stats.racing import decide_round, race_threshold
from engine.store.projections.cases import case_values
from engine.store.projections.run_state import RunState


def racing(spec: ExperimentSpec) -> bool:
    return spec.kind == "tune" and spec.stopping is not None and spec.stopping.rule == "race"


async def race_candidate(
    run: TuneRun, baseline: VariantSpec, candidate: VariantSpec
) -> k.VariantEliminated | str | None:
    """Run the candidate against the best round by round: its elimination (logged by the caller with
    the rejection), a reason the run ended first, or None when it ran every case without a drop."""
    assert run.spec.stopping is not None
    spec, state = run.spec, run.pipe.state
    if candidate.name in state.eliminated:
        return state.eliminated[candidate.name]  # dropped before a restart: the same drop
    if results_beyond(state, candidate.name, spec.repeat.count):
        return None  # a resumed session already survived the race and went on to extra repeats
    rounds, order = spec.stopping.rounds, race_order(spec)
    sizes = round_sizes(spec, rounds)
    threshold = race_threshold(spec.stopping.alpha, rounds, 2, spec.stopping.protect, sizes)
    for round_no in range(1, rounds + 1):
        cases = order[: round_cases(len(order), round_no, rounds)]
        plan = build_plan(spec, run.run_id, [baseline, candidate], run.load_output, base_dir=run.base_dir)
        plan.narrow(cases)
        reason = await run.workers.run(plan)
        if reason != "completed":
            return reason
        if round_no == rounds:
            return None  # every case ran: the accept rule decides, on all of them
        ids = [c.id for c in cases]
        values = {v.name: case_values(state, v.name, ids, "mean") for v in (baseline, candidate)}
        outcome = decide_round(values, [baseline.name, candidate.name], threshold, 0.0)
        drop = next((d for d in outcome.drops if d.variant == candidate.name), None)
        if drop is not None:
            return k.VariantEliminated(
                run_id=run.run_id, ts=time.time(), variant=candidate.name, round=round_no,
                lost_to=baseline.name, delta=round(drop.delta, 12), p_value=round(drop.p_value, 12),
                threshold=threshold, cases=len(values[candidate.name]),
            )  # fmt: skip
    return None


def results_beyond(state: RunState, candidate: str, repeats: int) -> bool:
    """Whether the log holds a result of the candidate from repeat `repeats` on: this evaluation
    decided on more repeats before the session was cut off. Deciding again on such a state would
    count trials the first decision never saw (and could stop short of rounds the session ran). The
    candidate, not the baseline: a baseline kept from an earlier evaluation has repeats of its own."""
    return any(
        variant == candidate and (cell.done() | cell.completed) >> repeats
        for (variant, _), cell in state.cells.items()
    )


def dropped_scores(spec: ExperimentSpec, state: RunState, drop: k.VariantEliminated) -> tuple[float, float]:
    """The best's and the dropped candidate's mean score over the cases of the round that dropped it."""
    assert spec.stopping is not None
    order = race_order(spec)
    ids = [c.id for c in order[: round_cases(len(order), drop.round, spec.stopping.rounds)]]
    base, cand = (case_values(state, v, ids, "mean") for v in (drop.lost_to, drop.variant))
    shared = [c for c in ids if c in base and c in cand]
    return _mean(base, shared), _mean(cand, shared)


def _mean(values: dict[str, Fraction], cases: list[str]) -> float:
    return float(sum(values[c] for c in cases) / len(cases)) if cases else 0.0


def elimination_reason(drop: k.VariantEliminated, rounds: int) -> str:
    return (
        f"dropped by the race in round {drop.round} of {rounds}: worse than {drop.lost_to} by "
        f"{drop.delta:.4f} over {drop.cases} cases, p {drop.p_value:.3g} (below {drop.threshold:.3g})"
    )
