"""Autonomous tuning sessions on the actor system.

One parameter changes per variation; baseline and candidate run on the same
cases with the same repeats and are compared case by case. A variation is
accepted only when the improvement reaches `min_improvement` and, beyond the
seed, is significant; a close call earns extra repeats before the decision.
Decisions are events, so a restarted session re-derives where it was from the
log and does not test a visited variation again.
"""

from __future__ import annotations

import time
from pathlib import Path

import msgspec
import trio

from engine.actors.search_space import Config
from engine.actors.tuning import Variation
from engine.actors.variants import propose_variants
from engine.events import kinds as k
from engine.events.spec import TuneSpec, VariantSpec
from engine.input.config_edit import apply_params
from engine.runtime.pipeline import Pipeline
from engine.runtime.tuning.evaluate import decision_event, evaluate, usage
from engine.runtime.tuning.history import BASELINE, earlier_configs
from engine.runtime.tuning.position import NO_HISTORY, Session, restore
from engine.runtime.tuning.race import (
    dropped_scores,
    elimination_reason,
    race_candidate,
    racing,
)
from engine.runtime.tuning.tuning_run import TuneRun
from engine.store.contract import store_call
from engine.store.projections.run_state import RunState


async def tune_session(run: TuneRun) -> str:
    reason = await _search(run)
    tune = run.spec.tune
    if tune is not None and tune.auto_apply and tune.apply_to:
        await _auto_apply(tune, run.run_id, run.pipe, run.source)
    return reason


async def _auto_apply(tune: TuneSpec, run_id: str, pipe: Pipeline, source: str) -> None:
    """Write the accepted values (double opt-in: auto_apply and a target file)."""
    accepted = [d for d in pipe.state.variations if isinstance(d, k.VariationAccepted)]
    if not accepted or tune.apply_to is None:
        return
    values = {d.parameter: d.value for d in accepted}
    path = Path(source).parent / tune.apply_to if source else Path(tune.apply_to)
    await trio.to_thread.run_sync(apply_params, path, values)
    await pipe.write_and_wait([k.ConfigApplied(run_id=run_id, ts=time.time(), path=str(path), values=values)])


async def _search(run: TuneRun) -> str:
    spec, run_id, pipe = run.spec, run.run_id, run.pipe
    assert spec.tune is not None
    state, tune = pipe.state, spec.tune
    session = Session(spec, tune, await _earlier(run))
    if BASELINE in state.variants:
        session.best = state.variants[BASELINE]
    restore(session, list(state.variations), state.variants)
    await _propose_best(run, session)
    while len(state.variations) < tune.max_experiments:
        variation = session.generator.next(session.best_values)
        if variation is None:
            return "completed"  # the search space is exhausted
        candidate = _resumed_candidate(state, variation) or session.candidate(variation, set(state.variants))
        await propose_variants(
            run_id=run_id, variants=[candidate], known=set(state.variants), emit=pipe.emit,
            parameter=variation.parameter, value=variation.value, parent=session.best.name,
        )  # fmt: skip
        await pipe.write_and_wait([])  # the proposal is folded before the next one is named
        decision = await _decide(run, session, candidate, variation)
        if isinstance(decision, str):
            return decision
        session.observe(variation, (decision.baseline_score, decision.candidate_score))  # as logged
        if isinstance(decision, k.VariationAccepted):
            session.accept(candidate, variation)
            await _propose_best(run, session)
    return "completed"


async def _decide(
    run: TuneRun, session: Session, candidate: VariantSpec, variation: Variation
) -> k.VariationAccepted | k.VariationRejected | str:
    """Evaluate the candidate against the best (raced first when the session races) and log the
    decision; or the reason the run ended before it."""
    tune = run.spec.tune
    assert tune is not None
    dropped = await race_candidate(run, session.best, candidate) if racing(run.spec) else None
    if isinstance(dropped, str):
        return dropped
    if dropped is not None:
        return await _reject_dropped(run, session, candidate, variation, dropped)
    outcome = await evaluate(run, session.best, candidate)
    if isinstance(outcome, str):
        return outcome
    delta, p_value, _, _, _, level = outcome
    accepted = delta >= tune.min_improvement and (not tune.require_significance or p_value < level)
    decision = decision_event(
        run.run_id, run.origin, candidate, variation, session.best.name, outcome, accepted,
        usage(run.pipe.state, candidate.name),
    )  # fmt: skip
    await run.pipe.write_and_wait([decision])
    return decision


async def _reject_dropped(
    run: TuneRun, session: Session, candidate: VariantSpec, variation: Variation, drop: k.VariantEliminated
) -> k.VariationRejected:
    """Log the race's drop with its rejection, in one batch (a resumed session finds the drop logged
    and logs only the rejection): its deficit and the race's test, over the cases it ran."""
    assert run.spec.stopping is not None
    base, cand = dropped_scores(run.spec, run.pipe.state, drop)
    outcome = (cand - base, drop.p_value, base, cand, 0, drop.threshold)
    spent, best = usage(run.pipe.state, candidate.name), session.best.name
    decision = decision_event(run.run_id, run.origin, candidate, variation, best, outcome, False, spent)
    assert isinstance(decision, k.VariationRejected)
    why = elimination_reason(drop, run.spec.stopping.rounds)
    rejected = msgspec.structs.replace(decision, reason=why, dropped_round=drop.round)
    logged = candidate.name in run.pipe.state.eliminated
    await run.pipe.write_and_wait([rejected] if logged else [drop, rejected])
    return rejected


async def _earlier(run: TuneRun) -> frozenset[Config]:
    """What earlier sessions of the experiment evaluated (read for scheduled sessions only)."""
    if run.log is None:
        return NO_HISTORY
    return await store_call(run.log, earlier_configs, run.log, run.spec.name, run.run_id)


async def _propose_best(run: TuneRun, session: Session) -> None:
    """Log the current best (the baseline, or an accepted variant re-measured) before it is run."""
    pipe = run.pipe
    await propose_variants(run_id=run.run_id, variants=[session.best], known=set(pipe.state.variants),
                           emit=pipe.emit)  # fmt: skip
    await pipe.write_and_wait([])


def _resumed_candidate(state: RunState, v: Variation) -> VariantSpec | None:
    """The candidate a stopped session was evaluating: proposed for this variation, never decided."""
    decided = {d.variant for d in state.variations}
    for name, proposal in state.proposals.items():
        same = (
            proposal.parameter == v.parameter
            and proposal.value is not None
            and float(proposal.value) == v.value
        )
        if same and name not in decided:
            return state.variants[name]
    return None
