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
from typing import Any

import msgspec
import trio

from engine.actors.search_space import Config
from engine.actors.tuning import Variation, VariationGenerator, defaults, quantize
from engine.actors.variants import propose_variants
from engine.events import kinds as k
from engine.events.spec import ExperimentSpec, TuneSpec, VariantSpec
from engine.input.config_edit import apply_params
from engine.runtime.pipeline import Pipeline
from engine.runtime.plan import build_plan
from engine.runtime.tune_history import BASELINE, earlier_configs
from engine.runtime.tune_race import (
    dropped_scores,
    elimination_reason,
    race_candidate,
    racing,
    results_beyond,
)
from engine.runtime.tune_run import TuneRun
from engine.stats import inference as stats
from engine.stats.comparisons import compare_cases
from engine.stats.sequential_looks import look_level
from engine.store.contract import store_call
from engine.store.projections.cases import case_values
from engine.store.projections.run_state import RunState
from engine.store.projections.variant_report import latency

NO_HISTORY: frozenset[Config] = frozenset()
REMEASURED = "+re"  # suffix of an accepted variant measured afresh


class Session:
    """Where the session stands: the current best variant and its parameters."""

    def __init__(self, spec: ExperimentSpec, tune: TuneSpec, earlier: frozenset[Config] = NO_HISTORY) -> None:
        self.spec, self.tune = spec, tune
        ranges = {p.name: p for p in tune.parameters}
        start = defaults(tune)
        for name, value in spec.params.items():
            if name in ranges and isinstance(value, int | float):
                start[name] = quantize(ranges[name], float(value))
        self.best_values = start
        self.best = VariantSpec(name=BASELINE, params={**spec.params, **_clean(start, ranges)})
        self.generator = VariationGenerator(tune, seed=spec.seed, earlier=earlier)
        self.generator.mark(start)  # evaluated as the baseline: never proposed again
        self.ranges = ranges

    def candidate(self, variation: Variation, known: set[str]) -> VariantSpec:
        value = _clean({variation.parameter: variation.value}, self.ranges)[variation.parameter]
        name, n = f"{variation.parameter}={value}", 1
        while name in known:
            n += 1
            name = f"{variation.parameter}={value}#{n}"
        return VariantSpec(name=name, params={**self.best.params, variation.parameter: value})

    def observe(self, variation: Variation, scores: tuple[float, float]) -> None:
        """What a decision measured, for a strategy that learns from it (optuna)."""
        self.generator.observe(self.best_values, variation, *scores)

    def accept(self, variant: VariantSpec, variation: Variation) -> None:
        self.best, self.best_values[variation.parameter] = remeasured(variant), variation.value


def remeasured(variant: VariantSpec) -> VariantSpec:
    """The accepted variant, measured afresh for the decisions after it. The trials that won its
    acceptance were selected for looking good (the winner's curse): compared against them, a later
    candidate would need to beat luck. A new name gives the same configuration new trial seeds."""
    return msgspec.structs.replace(variant, name=f"{variant.name}{REMEASURED}")


def _clean(values: dict[str, float], ranges: dict[str, Any]) -> dict[str, Any]:
    return {n: int(v) if ranges[n].whole else v for n, v in values.items()}


def restore(session: Session, state_variations: list[Any], variants: dict[str, VariantSpec]) -> None:
    """Re-drive the generator through the decisions already in the log."""
    for decided in state_variations:
        proposed = session.generator.next(session.best_values)
        logged = Variation(decided.parameter, float(decided.value))
        if proposed != logged:
            session.generator.mark(session.best_values, logged)
        session.observe(logged, (decided.baseline_score, decided.candidate_score))
        if isinstance(decided, k.VariationAccepted) and decided.variant in variants:
            session.accept(variants[decided.variant], logged)


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
    outcome = await _evaluate(run, session.best, candidate)
    if isinstance(outcome, str):
        return outcome
    delta, p_value, _, _, _, level = outcome
    accepted = delta >= tune.min_improvement and (not tune.require_significance or p_value < level)
    decision = _decision(
        run.run_id, run.origin, candidate, variation, session.best.name, outcome, accepted,
        _usage(run.pipe.state, candidate.name),
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
    usage, best = _usage(run.pipe.state, candidate.name), session.best.name
    decision = _decision(run.run_id, run.origin, candidate, variation, best, outcome, False, usage)
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


async def _evaluate(
    run: TuneRun, baseline: VariantSpec, candidate: VariantSpec
) -> tuple[float, float, float, float, int, float] | str:
    spec, pipe = run.spec, run.pipe
    assert spec.tune is not None
    cases = [c.id for c in spec.cases]
    looks = spec.tune.max_extra_repeats + 1 if spec.tune.require_significance else 1
    for rounds in range(looks):
        repeats = spec.repeat.count * (rounds + 1)
        if rounds + 1 < looks and results_beyond(pipe.state, candidate.name, repeats):
            continue  # a resumed session: this round's decision, "more repeats", is in the log already
        plan = build_plan(spec, run.run_id, [baseline, candidate], run.load_output, repeats=repeats)
        reason = await run.workers.run(plan)
        if reason != "completed":
            return reason
        base = case_values(pipe.state, baseline.name, cases, "mean")
        cand = case_values(pipe.state, candidate.name, cases, "mean")
        result = compare_cases(base, cand, spec.seed)
        shared = [c for c in base if c in cand]
        delta = result.delta or 0.0
        p_value = 1.0 if result.p_value is None else result.p_value
        level = look_level(spec.gate.alpha, rounds + 1, looks)
        if delta < spec.tune.min_improvement or p_value < level:
            break  # too small to matter (futile), or clear: no more repeats
    base_mean, cand_mean = stats.mean([base[c] for c in shared]), stats.mean([cand[c] for c in shared])
    return delta, p_value, base_mean or 0.0, cand_mean or 0.0, rounds, level


def _usage(state: RunState, variant: str) -> dict[str, Any]:
    """What evaluating the candidate cost: its subject and judge tokens, its mean trial latency."""
    totals = state.totals.get(variant)
    if totals is None:
        return {}
    return {
        "tokens_used": totals.tokens_in + totals.tokens_out + totals.judge_tokens,
        "latency_ms": latency(totals).mean or 0.0,
    }


def _decision(
    run_id: str,
    origin: str,
    candidate: VariantSpec,
    variation: Variation,
    baseline: str,
    outcome: tuple[float, float, float, float, int, float],
    accepted: bool,
    usage: dict[str, Any],
) -> k.VariationAccepted | k.VariationRejected:
    delta, p_value, base_score, cand_score, rounds, level = outcome
    common = dict(
        run_id=run_id, ts=time.time(), variant=candidate.name, parameter=variation.parameter,
        value=candidate.params[variation.parameter], baseline=baseline, baseline_score=round(base_score, 6),
        candidate_score=round(cand_score, 6), delta=round(delta, 6), p_value=round(p_value, 6), origin=origin,
        **usage,
    )  # fmt: skip
    if accepted:
        return k.VariationAccepted(**common)  # type: ignore[arg-type]
    why = f"delta {delta:+.4f}, p {p_value:.3g} (needed < {level:.3g}) after {rounds + 1} round(s) of repeats"
    return k.VariationRejected(**common, reason=why)  # type: ignore[arg-type]
