"""A tuning decision's evidence: the candidate against the best on the same cases, with extra repeats
on a close call (sequential looks), what evaluating it cost, and the decision event."""

from __future__ import annotations

import time
from typing import Any

from engine.actors.tuning import Variation
from engine.events import kinds as k
from engine.events.spec import VariantSpec
from engine.runtime.plan import build_plan
from engine.runtime.tuning.race import results_beyond
from engine.runtime.tuning.tuning_run import TuneRun
from engine.stats import inference as stats
from engine.stats.comparisons import compare_cases
from engine.stats.sequential_looks import look_level
from engine.store.projections.cases import case_values
from engine.store.projections.run_state import RunState
from engine.store.projections.variant_report import latency

Outcome = tuple[float, float, float, float, int, float]  # delta, p, base score, cand score, rounds, level


async def evaluate(run: TuneRun, baseline: VariantSpec, candidate: VariantSpec) -> Outcome | str:
    spec, pipe = run.spec, run.pipe
    assert spec.tune is not None
    cases = [c.id for c in spec.cases]
    looks = spec.tune.max_extra_repeats + 1 if spec.tune.require_significance else 1
    for rounds in range(looks):
        repeats = spec.repeat.count * (rounds + 1)
        if rounds + 1 < looks and results_beyond(pipe.state, candidate.name, repeats):
            continue  # a resumed session: this round's decision, "more repeats", is in the log already
        plan = build_plan(
            spec, run.run_id, [baseline, candidate], run.load_output, repeats=repeats, base_dir=run.base_dir
        )
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


def usage(state: RunState, variant: str) -> dict[str, Any]:
    """What evaluating the candidate cost: its subject and judge tokens, its mean trial latency."""
    totals = state.totals.get(variant)
    if totals is None:
        return {}
    return {
        "tokens_used": totals.tokens_in + totals.tokens_out + totals.judge_tokens,
        "latency_ms": latency(totals).mean or 0.0,
    }


def decision_event(
    run_id: str,
    origin: str,
    candidate: VariantSpec,
    variation: Variation,
    baseline: str,
    outcome: Outcome,
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
