"""Errors are never neutral inside a run either: each candidate's error rate against the baseline's.

A candidate whose agent errors on the hard cases is scored on the easy ones it finished, so its score
can beat the baseline's. Per case, the share of finished trials with no usable result is paired with
the baseline's for the rise; its p is the error-rate test `engine compare` takes too (errored trials
counted within each case: stats/stratified.py), Holm across the candidates. A rise past
`[gate] max_error_rate_increase` that is significant marks the comparison `more_errors`, and such a
candidate's win is not significant.
"""

from __future__ import annotations

from engine.events.report import Comparison
from engine.stats import inference as stats
from engine.stats.comparisons import compare_cases, rnd
from engine.stats.stratified import stratified_mid_p
from engine.store.projections.cases import case_error_counts, error_shares
from engine.store.projections.run_state import RunState


def add_error_comparisons(comparisons: list[Comparison], state: RunState, case_ids: list[str]) -> None:
    if not comparisons or state.spec is None:
        return
    gate, seed = state.spec.gate, state.spec.seed
    base = case_error_counts(state, comparisons[0].baseline, case_ids)
    counts = [case_error_counts(state, c.candidate, case_ids) for c in comparisons]
    shares = error_shares(base)
    results = [compare_cases(shares, error_shares(cand), seed, resamples=1) for cand in counts]  # the deltas
    adjusted = stats.holm([_p_value(base, cand) for cand in counts])
    for c, result, p in zip(comparisons, results, adjusted, strict=True):
        c.error_rate_delta = rnd(result.delta)
        c.error_rate_p_value = rnd(p)
        rise = result.delta is not None and result.delta > gate.max_error_rate_increase
        c.more_errors = rise and p is not None and p < gate.alpha


def _p_value(base: dict[str, tuple[int, int]], cand: dict[str, tuple[int, int]]) -> float | None:
    """The error-rate test over the cases both ran."""
    return stratified_mid_p((*base[case], *cand[case]) for case in base if case in cand)
