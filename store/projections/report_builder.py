"""Build the report (events.report.RunReport) from a folded RunState.

Deterministic by construction: iteration follows the spec's variant and case
order, sums are fixed point, bootstrap resampling is seeded by the experiment
seed, and floats are rounded, so the same state always renders the same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from engine.events.outcome import failed_outcome
from engine.events.report import (
    Comparison,
    RunReport,
    VariantReport,
)
from engine.events.spec import ExperimentSpec
from engine.stats import inference as stats
from engine.stats.comparisons import add_relative_figures, compare_all, rnd, tied_with_winner
from engine.stats.decidability import decidability
from engine.store.projections.cases import case_values
from engine.store.projections.errors_compared import add_error_comparisons
from engine.store.projections.outcome import (
    integrity_warnings,
    tuning_winner,
    variation_record,
)
from engine.store.projections.pairwise_verdicts import pairwise_reports
from engine.store.projections.race_report import race_warnings, race_winner
from engine.store.projections.report_sections import (
    cases_section,
    errors_section,
    grading_section,
    stopping_section,
)
from engine.store.projections.reuse_report import reuse_warnings
from engine.store.projections.run_state import RunState
from engine.store.projections.variant_report import stops_at_first_pass, variant_report

__all__ = ["build_report"]


@dataclass(frozen=True, slots=True)
class Inputs:
    """What every section of the report reads: the variants and cases in spec order, the per-case
    values they are compared on and the significance level."""

    spec: ExperimentSpec | None
    strategy: str
    names: list[str]
    case_ids: list[str]
    basis: str  # the mean score's: "first_attempt" or "all_attempts"
    means: dict[str, dict[str, Fraction]]  # per-case mean scores: the variants' figures and tags
    per_case: dict[str, dict[str, Fraction]]  # what the comparisons pair (any-pass for pass_at_k)
    baseline: str | None
    alpha: float


def build_report(state: RunState) -> RunReport:
    """The report, section by section, as the renderers draw it."""
    given = inputs(state)
    variants = [
        variant_report(state, name, given.case_ids, given.means[name], given.strategy) for name in given.names
    ]
    comparisons = compared(state, given, variants)
    winner, significant, error_bound = verdict(state, given, variants, comparisons)
    tied, runner_up_p = ties(state, given, variants, winner)
    done = state.trials_done()
    spec = given.spec
    return RunReport(
        run_id=state.run_id, experiment=spec.name if spec else "", status=state.status,
        outcome=failed_outcome(state.status, done, state.trials_errored()),
        trials_total=state.trials_total or done, trials_done=done, baseline=given.baseline,
        winner=winner, winner_significant=significant, tied_best=tied, session_error_bound=error_bound,
        runner_up_p_value=runner_up_p, variants=variants, comparisons=comparisons, strategy=given.strategy,
        variations=[variation_record(v) for v in state.variations], spec_hash=state.spec_hash,
        pairwise=pairwise_reports(state.pairwise, spec.gate.alpha if spec else 0.05),
        decidability=decidability(spec, len(given.names)) if spec else None, mean_score_basis=given.basis,
        warnings=[*state.load_warnings, *integrity_warnings(state), *race_warnings(state),
                  *reuse_warnings(state, given.baseline, given.names)],
        **stopping_section(state, done), **errors_section(state), **grading_section(state),
        **cases_section(state, given.names, given.case_ids),
    )  # fmt: skip


def inputs(state: RunState) -> Inputs:
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
    alpha = spec.gate.alpha if spec else 0.05
    if state.looks:  # a sequential run: significance at the level of the look it stopped at
        alpha = state.looks[-1].level
    elif state.race_rounds:  # a race looked after every round: significance at its threshold
        alpha = state.race_rounds[-1].threshold
    baseline = names[0] if names else None
    return Inputs(spec, strategy, names, case_ids, basis, means, per_case, baseline, alpha)


def compared(state: RunState, given: Inputs, variants: list[VariantReport]) -> list[Comparison]:
    seed = given.spec.seed if given.spec else 0
    comparisons = compare_all(given.baseline, given.names, given.per_case, seed=seed, alpha=given.alpha)
    add_relative_figures(comparisons, {v.name: v for v in variants})
    add_error_comparisons(comparisons, state, given.case_ids)
    return comparisons


def verdict(
    state: RunState, given: Inputs, variants: list[VariantReport], comparisons: list[Comparison]
) -> tuple[str | None, bool, float | None]:
    """The winner, whether it is significant, and a tuning session's error bound."""
    spec = given.spec
    if spec is not None and spec.kind == "tune":
        return *tuning_winner(state), session_error_bound(spec, len(state.variations))
    if state.race_rounds:
        return *race_winner(state), None
    if not given.names:
        return None, False, None
    means = {v.name: v.strategy_score for v in variants}
    adjusted = {c.candidate: c.p_value_adjusted for c in comparisons}
    deltas = {c.candidate: c.delta for c in comparisons}
    winner, significant = stats.pick_winner(given.baseline or "", means, adjusted, deltas, given.alpha)
    # a score that beats the baseline's only on the cases the candidate finished proves nothing
    significant = significant and not any(c.more_errors for c in comparisons if c.candidate == winner)
    return winner, significant, None


def ties(
    state: RunState, given: Inputs, variants: list[VariantReport], winner: str | None
) -> tuple[list[str], float | None]:
    """The variants not separated from the winner, and the runner-up's p-value against it."""
    if state.race_rounds:  # the race decided who is separated: the dropped are, the survivors are not
        survivors = state.race_rounds[-1].survivors
        if winner is None or len(survivors) < 2:
            return [], None
        return [winner, *(s for s in survivors if s != winner)], None
    if given.spec is None or given.spec.kind == "tune":
        return [], None
    scores = {v.name: v.strategy_score for v in variants}
    return tied_with_winner(winner, scores, given.per_case, given.spec.seed, given.alpha)


def session_error_bound(spec: ExperimentSpec, decisions: int) -> float | None:
    """A tuning session's chance, at most, of accepting at least one change that does nothing: each
    decision holds alpha over its repeated looks, and the decisions add up (Bonferroni)."""
    if spec.tune is None or not spec.tune.require_significance:
        return None  # accepted on the improvement alone: no error control to report
    return rnd(min(1.0, decisions * spec.gate.alpha))
