"""Build the report (events.report.RunReport) from a folded RunState.

Deterministic by construction: iteration follows the spec's variant and case
order, sums are fixed point, bootstrap resampling is seeded by the experiment
seed, and floats are rounded, so the same state always renders the same bytes.
"""

from __future__ import annotations

from events import kinds as k
from events.report import (
    FlakyCase,
    Latency,
    RunReport,
    Tokens,
    VariantReport,
    VariationRecord,
)
from events.spec import ReplicaAggregation
from store import stats
from store.projections.cases import case_values, tag_summaries
from store.projections.comparisons import DIGITS, add_relative_figures, compare_all, rnd, rnd_pair
from store.projections.run_state import SCALE, Cell, RunState, VariantTotals
from store.projections.verdicts import count_verdicts

_ALL = ReplicaAggregation()


def build_report(state: RunState) -> RunReport:
    spec = state.spec
    strategy = spec.repeat.strategy if spec else "mean"
    names = list(state.variants)
    case_ids = [c.id for c in spec.cases] if spec else sorted({c for _, c in state.cells})
    per_case = {name: case_values(state, name, case_ids, strategy) for name in names}
    variants = [variant_report(state, name, case_ids, strategy) for name in names]
    baseline = names[0] if names else None
    alpha = spec.gate.alpha if spec else 0.05
    comparisons = compare_all(baseline, names, per_case, seed=spec.seed if spec else 0, alpha=alpha)
    add_relative_figures(comparisons, {v.name: v for v in variants})
    means = {v.name: v.strategy_score for v in variants}
    adjusted = {c.candidate: c.p_value_adjusted for c in comparisons}
    deltas = {c.candidate: c.delta for c in comparisons}
    winner, significant = (
        stats.pick_winner(baseline or "", means, adjusted, deltas, alpha) if names else (None, False)
    )
    done = state.trials_done()
    return RunReport(
        run_id=state.run_id,
        experiment=spec.name if spec else "",
        status=state.status,
        is_partial=is_partial(state, done),
        trials_total=state.trials_total or done,
        trials_done=done,
        baseline=baseline,
        winner=winner,
        winner_significant=significant,
        variants=variants,
        comparisons=comparisons,
        flaky_cases=flaky_cases(state, names, case_ids),
        budget_exhausted=list(state.budget_exhausted),
        strategy=strategy,
        variations=[variation_record(v) for v in state.variations],
        spec_hash=state.spec_hash,
    )


def is_partial(state: RunState, done: int) -> bool:
    if state.status in ("partial", "cancelled", "failed") or state.budget_exhausted:
        return True
    return done < state.trials_total


def variant_report(state: RunState, name: str, case_ids: list[str], strategy: str) -> VariantReport:
    cells = [state.cells[(name, c)] for c in case_ids if (name, c) in state.cells]
    means = list(case_values(state, name, case_ids, "mean").values())
    graded = sum(c.graded.bit_count() for c in cells)
    passed = sum(c.passed.bit_count() for c in cells)
    k_value = state.spec.repeat.count if state.spec else 1
    mean_score = stats.mean(means)
    ci = within_unit(stats.mean_ci95(means))
    pass_k = _mean_over_cells(
        cells, lambda c: stats.pass_at_k(c.graded.bit_count(), c.passed.bit_count(), k_value)
    )
    pass_hat = _mean_over_cells(
        cells, lambda c: stats.pass_hat_k(c.graded.bit_count(), c.passed.bit_count(), k_value)
    )
    strategy_score = {"mean": mean_score, "pass_at_k": pass_k, "confidence_interval": ci[0] if ci else None}
    totals = state.totals.get(name) or VariantTotals()
    variant = state.variants[name]
    return VariantReport(
        name=name,
        trials=sum((c.completed | c.failed).bit_count() for c in cells),
        scored=sum((c.graded & ~c.unscored).bit_count() for c in cells),
        errors=sum(c.failed.bit_count() for c in cells),
        skipped=sum(c.skipped.bit_count() for c in cells),
        passed=passed,
        mean_score=rnd(mean_score),
        ci95=rnd_pair(ci),
        pass_rate=rnd(passed / graded) if graded else None,
        pass_rate_ci95=rnd_pair(stats.wilson_ci95(passed, graded)),
        pass_at_k=rnd(pass_k),
        pass_hat_k=rnd(pass_hat),
        strategy_score=rnd(strategy_score[strategy]),
        latency_ms=latency(totals),
        tokens=Tokens(in_=totals.tokens_in, out=totals.tokens_out),
        judge_tokens=totals.judge_tokens,
        cost_usd=round(totals.cost / SCALE, DIGITS),
        params=dict(variant.params),
        unscored=sum(c.unscored.bit_count() for c in cells),
        by_tag=tag_summaries(state, name),
        cases=count_verdicts(cells, state.spec.scoring.replica_aggregation if state.spec else _ALL),
    )


def within_unit(pair: tuple[float, float] | None) -> tuple[float, float] | None:
    """Scores live in [0, 1]; a t-interval near an end would otherwise claim 1.17."""
    return None if pair is None else (max(0.0, pair[0]), min(1.0, pair[1]))


def _mean_over_cells(cells: list[Cell], per_cell) -> float | None:  # noqa: ANN001
    values = [per_cell(c) for c in cells if c.graded]
    return stats.mean(values)


def latency(totals: VariantTotals) -> Latency:
    hist = totals.latency_us
    count = hist.get_total_count()
    if not count:
        return Latency()
    at = hist.get_value_at_percentile
    return Latency(
        p50=rnd(at(50) / 1000),
        p95=rnd(at(95) / 1000),
        p99=rnd(at(99) / 1000),
        mean=rnd(totals.latency_sum_us / count / 1000),
    )


def flaky_cases(state: RunState, names: list[str], case_ids: list[str]) -> list[FlakyCase]:
    out = []
    for name in names:
        for case in case_ids:
            cell = state.cells.get((name, case))
            if cell and cell.passed and cell.graded & ~cell.passed:
                out.append(
                    FlakyCase(
                        variant=name, case=case, passes=cell.passed.bit_count(), runs=cell.graded.bit_count()
                    )
                )
    return out


def variation_record(e: k.VariationAccepted | k.VariationRejected) -> VariationRecord:
    return VariationRecord(
        variant=e.variant,
        parameter=e.parameter,
        value=e.value,
        baseline_score=e.baseline_score,
        candidate_score=e.candidate_score,
        delta=e.delta,
        accepted=isinstance(e, k.VariationAccepted),
        p_value=e.p_value,
        reason=getattr(e, "reason", ""),
        origin=e.origin,
        tokens_used=e.tokens_used,
        latency_ms=e.latency_ms,
    )
