"""The report's statistics from folded events: which interval, which winner claim, which pass^k."""

from __future__ import annotations

import pytest

from engine.events import kinds as k
from engine.events.spec import (
    CaseSpec,
    ExperimentSpec,
    RepeatSpec,
    ReplicaAggregation,
    ScoringSpec,
    VariantSpec,
)
from engine.stats import inference as stats
from engine.store.projection import fold
from engine.store.projections.report_builder import build_report
from engine.store.projections.run_state import RunState, VariantTotals, evolve
from engine.store.projections.variant_report import latency

RUN = "r"


def run(
    passes: dict[str, list[list[bool]]], repeat: RepeatSpec | None = None, scoring: ScoringSpec | None = None
) -> list[k.Event]:
    """A finished run: passes[variant][case][repeat] (a missing repeat was skipped by early exit)."""
    cases = len(next(iter(passes.values())))
    case_specs = [CaseSpec(id=f"c{i}", prompt="p") for i in range(cases)]
    spec = ExperimentSpec(
        name="s", cases=case_specs, repeat=repeat or RepeatSpec(), scoring=scoring or ScoringSpec()
    )
    events: list[k.Event] = [k.ExperimentDefined(run_id=RUN, spec=spec, spec_hash="h")]
    for i, name in enumerate(passes):
        events.append(k.VariantProposed(run_id=RUN, variant=VariantSpec(name=name), index=i))
    events.append(k.RunStarted(run_id=RUN, experiment="s", trials_total=0))
    for variant, by_case in passes.items():
        for c, repeats in enumerate(by_case):
            for r in range(spec.repeat.count):
                ident = {"run_id": RUN, "variant": variant, "case": f"c{c}", "repeat": r}
                if r >= len(repeats):
                    events.append(k.TrialSkipped(**ident, reason="early_exit"))
                    continue
                events.append(k.TrialCompleted(**ident, output_hash="x", latency_ms=1.0))
                events.append(k.TrialGraded(**ident, score=float(repeats[r]), passed=repeats[r]))
    return [*events, k.RunCompleted(run_id=RUN, status="completed")]


def report_of(events: list[k.Event]):  # noqa: ANN201
    return build_report(fold(evolve, RunState(RUN), events))


def test_the_pass_rate_interval_is_over_cases_and_the_per_trial_one_is_labelled() -> None:
    # 4 cases x 10 repeats: two always pass, two always fail. Pooled, 40 trials look precise (Wilson
    # 0.35-0.65); over cases, 4 clusters say far less, and agree with the mean score's interval.
    cases = [[True] * 10, [True] * 10, [False] * 10, [False] * 10]
    report = report_of(run({"a": cases}, RepeatSpec(count=10)))
    v = report.variants[0]
    assert v.pass_rate == 0.5 and v.pass_rate_ci95 == v.ci95
    assert v.pass_rate_trial_ci95 == [round(x, 6) for x in stats.wilson_ci95(20, 40)]
    assert v.pass_rate_ci95[0] < v.pass_rate_trial_ci95[0] and v.pass_rate_ci95[1] > v.pass_rate_trial_ci95[1]


def test_pass_hat_k_is_unavailable_when_early_exit_skipped_the_attempts_it_needs() -> None:
    # p = 0.4, k = 3: a case that passed first skipped two attempts; pass^k cannot be read from it
    cases = [[True], [False, True], [False, False, False], [False, False, True], [True]]
    early = report_of(run({"a": cases}, RepeatSpec(count=3, strategy="pass_at_k", early_exit=True)))
    assert early.variants[0].pass_hat_k is None and early.variants[0].pass_at_k == 0.8
    full = [[True, False, True], [False, True, True], [False] * 3, [False, False, True], [True] * 3]
    every = report_of(run({"a": full}, RepeatSpec(count=3, strategy="pass_at_k", early_exit=False)))
    assert every.variants[0].pass_hat_k == 0.2  # only the last case passed all three


def test_two_equally_good_candidates_are_tied_best_not_a_winner_each() -> None:
    # 20 cases: both candidates fix the same 8 of the baseline's 10 failures
    base = [[True]] * 10 + [[False]] * 10
    better = [[True]] * 18 + [[False]] * 2
    report = report_of(run({"base": base, "x": better, "y": better[::-1][::-1]}))
    assert report.winner is None  # an exact tie at the top: nobody leads
    nearly = [[True]] * 17 + [[False]] * 3
    report = report_of(run({"base": base, "x": better, "y": nearly}))
    assert report.winner == "x" and report.winner_significant  # it beats the baseline ...
    # ... not y: one case apart, the mid-p of its two sign patterns (one at the observed sum) is 0.5
    assert report.tied_best == ["x", "y"] and report.runner_up_p_value == 0.5
    alone = report_of(run({"base": base, "x": better}))
    assert alone.winner == "x" and alone.tied_best == []  # separated from the only other variant


def test_flaky_cases_follow_the_verdict_rule() -> None:
    cases = [[True, False, True], [False, False, False], [True, True, True], [False, True, False]]
    for rule, flaky in (("all", ["c0", "c3"]), ("any", []), ("percentage", ["c3"])):
        scoring = ScoringSpec(replica_aggregation=ReplicaAggregation(strategy=rule, min_pass_rate=0.6))
        report = report_of(run({"a": cases}, RepeatSpec(count=3), scoring))
        assert [f.case for f in report.flaky_cases] == flaky, rule
        assert report.variants[0].cases.flaky == len(flaky), rule


def test_latency_percentiles_use_the_nearest_rank() -> None:
    # 60 trials, the slowest 4 ms: rank ceil(0.99 * 60) = 60 is the slowest (the rounded rank said 59)
    totals = VariantTotals()
    for micros in [390] * 59 + [4000]:
        totals.latency_us.record_value(micros)
        totals.latency_sum_us += micros
    figures = latency(totals)
    assert figures.p99 == pytest.approx(4.0, rel=1e-3) and figures.p95 == pytest.approx(0.39, rel=1e-3)
    assert totals.latency_us.get_value_at_percentile(99) < 1000  # what the histogram's own rank gives
