"""Build the report (events.report.RunReport) from a folded RunState.

Deterministic by construction: iteration follows the spec's variant and case
order, sums are fixed point, bootstrap resampling is seeded by the experiment
seed, and floats are rounded, so the same state always renders the same bytes.
"""

from __future__ import annotations

from engine.events import kinds as k
from engine.events.report import (
    BudgetStop,
    DataError,
    GroundTruth,
    IdenticalRepeats,
    JudgeAgreement,
    RunReport,
    StoppingReport,
)
from engine.events.spec import ExecutionSpec, ExperimentSpec
from engine.stats import inference as stats
from engine.stats.comparisons import add_relative_figures, compare_all, rnd, tied_with_winner
from engine.stats.decidability import decidability
from engine.store.projections.cases import case_values
from engine.store.projections.errors_compared import add_error_comparisons
from engine.store.projections.outcome import (
    error_rate,
    error_summaries,
    integrity_warnings,
    tuning_winner,
    variation_record,
)
from engine.store.projections.pairwise_verdicts import pairwise_reports
from engine.store.projections.race_report import race_stopping, race_warnings, race_winner
from engine.store.projections.run_state import RunState
from engine.store.projections.scenarios import reproducers, scenario_verdicts
from engine.store.projections.variant_report import flaky_cases, stops_at_first_pass, variant_report

__all__ = ["build_report", "is_partial"]


def build_report(state: RunState) -> RunReport:
    spec = state.spec
    strategy = spec.repeat.strategy if spec else "mean"
    names = list(state.variants)
    case_ids = [c.id for c in spec.cases] if spec else sorted({c for _, c in state.cells})
    # per-case values once per variant: the mean score feeds the variant's figures, its tags and (but
    # for pass_at_k, which pairs on any-pass) the comparisons
    basis = "first_attempt" if stops_at_first_pass(state) else "all_attempts"
    means = {name: case_values(state, name, case_ids, "first_attempt" if basis == "first_attempt" else "mean")
             for name in names}  # fmt: skip
    per_case = means
    if strategy == "pass_at_k":
        per_case = {name: case_values(state, name, case_ids, strategy) for name in names}
    variants = [variant_report(state, name, case_ids, means[name], strategy) for name in names]
    baseline = names[0] if names else None
    alpha = spec.gate.alpha if spec else 0.05
    if state.looks:  # a sequential run: significance at the level of the look it stopped at
        alpha = state.looks[-1].level
    elif state.race_rounds:  # a race looked after every round: significance at its threshold
        alpha = state.race_rounds[-1].threshold
    comparisons = compare_all(baseline, names, per_case, seed=spec.seed if spec else 0, alpha=alpha)
    add_relative_figures(comparisons, {v.name: v for v in variants})
    add_error_comparisons(comparisons, state, case_ids)
    error_bound = None
    if spec is not None and spec.kind == "tune":
        winner, significant = tuning_winner(state)
        error_bound = session_error_bound(spec, len(state.variations))
    elif state.race_rounds:
        winner, significant = race_winner(state)
    elif names:
        means = {v.name: v.strategy_score for v in variants}
        adjusted = {c.candidate: c.p_value_adjusted for c in comparisons}
        deltas = {c.candidate: c.delta for c in comparisons}
        winner, significant = stats.pick_winner(baseline or "", means, adjusted, deltas, alpha)
        # a score that beats the baseline's only on the cases the candidate finished proves nothing
        significant = significant and not any(c.more_errors for c in comparisons if c.candidate == winner)
    else:
        winner, significant = None, False
    tied, runner_up_p = [], None
    if state.race_rounds:  # the race decided who is separated: the dropped are, the survivors are not
        survivors = state.race_rounds[-1].survivors
        tied = [winner, *(s for s in survivors if s != winner)] if winner and len(survivors) > 1 else []
    elif spec is not None and spec.kind != "tune":
        scores = {v.name: v.strategy_score for v in variants}
        tied, runner_up_p = tied_with_winner(winner, scores, per_case, spec.seed, alpha)
    done = state.trials_done()
    rate = error_rate(state)
    max_rate = (spec.execution if spec else ExecutionSpec()).max_error_rate
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
        tied_best=tied,
        session_error_bound=error_bound,
        stopping=stopping_report(state, done) or race_stopping(state, done),
        judge_agreement=judge_agreement(state),
        runner_up_p_value=runner_up_p,
        variants=variants,
        comparisons=comparisons,
        flaky_cases=flaky_cases(state, names, case_ids),
        budget_exhausted=list(state.budget_exhausted),
        strategy=strategy,
        variations=[variation_record(v) for v in state.variations],
        spec_hash=state.spec_hash,
        errors=error_summaries(state),
        error_rate=rate,
        max_error_rate=max_rate,
        error_rate_exceeded=rate is not None and rate > max_rate,
        stop_reason=state.stop_message,
        grading=state.grading,
        grading_name=state.grading_name or "original",
        duplicate_results=state.duplicates,
        data_errors=[DataError(seq=seq, message=message) for seq, message in state.unusable],
        data_error_count=state.unusable_count,
        warnings=state.load_warnings + integrity_warnings(state) + race_warnings(state),
        identical_repeats=identical_repeats(state),
        scenarios=scenario_verdicts(state, names, case_ids),
        reproducers=reproducers(state, names, case_ids),
        pairwise=pairwise_reports(state.pairwise, spec.gate.alpha if spec else 0.05),
        decidability=decidability(spec, len(names)) if spec else None,
        mean_score_basis=basis,
        ground_truth=GroundTruth(from_labels=state.from_labels, from_judges=state.from_judges)
        if state.label_round
        else None,
        budget_stops=[budget_stop(e) for e in state.budget_stops],
    )


def budget_stop(e: k.BudgetExhausted) -> BudgetStop:
    def num(x: float) -> str:
        return f"{x:,.4f}".rstrip("0").rstrip(".") if x != int(x) else f"{int(x):,}"

    note = f"{e.budget}: {num(e.used)} of {num(e.limit)} used"
    if e.reserved > 0:
        note += f"; stopped early: the next trial could spend up to {num(e.reserved)} (its reservation)"
    return BudgetStop(budget=e.budget, limit=e.limit, used=e.used, reserved=e.reserved, note=note)


def identical_repeats(state: RunState) -> list[IdenticalRepeats]:
    """(variant, case) cells whose two or more completed repeats all produced the same output."""
    return [
        IdenticalRepeats(variant=variant, case=case, repeats=cell.completed.bit_count())
        for (variant, case), cell in sorted(state.cells.items())
        if cell.completed.bit_count() >= 2 and not cell.outputs_vary
    ]


def session_error_bound(spec: ExperimentSpec, decisions: int) -> float | None:
    """A tuning session's chance, at most, of accepting at least one change that does nothing: each
    decision holds alpha over its repeated looks, and the decisions add up (Bonferroni)."""
    if spec.tune is None or not spec.tune.require_significance:
        return None  # accepted on the improvement alone: no error control to report
    return rnd(min(1.0, decisions * spec.gate.alpha))


def stopping_report(state: RunState, done: int) -> StoppingReport | None:
    if not state.looks or state.spec is None or state.spec.stopping is None:
        return None
    last = state.looks[-1]
    fixed = state.trials_total
    return StoppingReport(
        rule=state.spec.stopping.rule, looks_done=last.look, max_looks=last.looks, stopped=last.stop,
        level=rnd(last.level) or 0.0, fixed_design_trials=fixed, trials_saved=max(0, fixed - done),
    )  # fmt: skip


def judge_agreement(state: RunState) -> dict[str, JudgeAgreement]:
    out = {}
    for name, t in sorted(state.judges.items()):
        mean = rnd(t.spread_sum / t.spread_count) if t.spread_count else None
        out[name] = JudgeAgreement(
            judged=t.judged, unparseable=t.unparseable, unparseable_rate=rnd(t.unparseable / t.judged) or 0.0,
            mean_spread=mean, max_spread=rnd(t.spread_max) if t.spread_count else None,
        )  # fmt: skip
    return out


def stopped_early(state: RunState) -> bool:
    """A sequential run that stopped at a look because the answer was clear, or a race that ended by
    its rule: complete, not partial."""
    if state.race_rounds:
        return state.race_rounds[-1].stop != ""
    return bool(state.looks) and state.looks[-1].stop in ("efficacy", "futility")


def is_partial(state: RunState, done: int) -> bool:
    if state.status in ("partial", "cancelled", "failed") or state.budget_exhausted:
        return True
    return done < state.trials_total and not stopped_early(state)
