"""`engine compare BASE CAND`: did the candidate run regress against the base run?

Metrics (the [gate] defaults, overridable in the candidate's [gate] table or on
the command line): pass rate and mean score (absolute drop, paired by case, a
drop counts only when significant after Holm across the variants, or untestable),
the error rate (errors per trial, paired by case: an absolute rise, the same test),
p95 latency and cost per trial (relative increase: the bootstrap interval of the
ratio must lie above 1 + threshold, at a level Bonferroni-corrected across the
variants), and each case on its own (Fisher's exact test over its replicas, Holm
across cases), for failures and, as its own family, for errors. Variants are matched
by name; two single-variant runs are matched whatever their names.

The metric rows of a variant pair are built in compare_metrics.py, the pairs themselves and the
warnings about what the runs do not share in compare_matching.py.
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from engine.errors import InputError
from engine.events.spec import GateSpec
from engine.runtime.run_status import run_state
from engine.store.contract import EventStore
from engine.store.kept.unpacked import unpacked_once
from engine.store.projections.report_builder import build_report
from engine.store.projections.reuse_report import compared_days_warnings
from engine.store.projections.run_state import RunState
from engine.views.case_changes import CaseChange, case_changes
from engine.views.compare.columns import ComparedColumns
from engine.views.compare.gates import MetricDelta
from engine.views.compare.machines import machines_apart
from engine.views.compare.matching import case_set_warnings, chosen_variants, matched_variants, spec_warnings
from engine.views.compare.metrics import Reported, ReportFigures, adjust_across_variants, variant_metrics
from engine.views.current_report import current_report
from engine.views.p_text import p_value
from engine.views.run_history import earlier_figures
from engine.views.spec_diff import SpecDifference, spec_differences


class RunComparison(msgspec.Struct, kw_only=True):
    baseline_run: str
    candidate_run: str
    regressed: bool
    regressions: list[str]
    warnings: list[str]
    shared_cases: int
    metrics: list[MetricDelta]
    newly_failing: list[CaseChange] = []  # cases significantly worse on their own replicas
    newly_passing: list[CaseChange] = []
    newly_erroring: list[CaseChange] = []  # cases whose replicas error significantly more often
    # no case in both runs: no figure is compared, and the gate can neither pass nor fail (exit 2)
    nothing_to_compare: bool = False
    spec_differences: list[SpecDifference] = []  # each spec field that differs, with both values


def compare_runs(
    log: EventStore,
    base_id: str,
    cand_id: str,
    gate: GateSpec | None = None,
    require_same_cases: bool = False,
    variants: tuple[str, str] | None = None,
    latency_across_machines: bool = False,
) -> RunComparison:
    """`variants` = (baseline's, candidate's) compares those two only: any two experiments of one run
    (the same run id twice) or of two runs. Latency of runs from different machines is compared only
    with `latency_across_machines`."""
    with unpacked_once():  # each state is read whole, then its head (is the stored report current?)
        base = run_state(log, base_id)
        cand = base if cand_id == base_id else run_state(log, cand_id)
        history = earlier_figures(log, base_id, cand_id)
        # the runs' current reports: stored ones while current (no statistics built again for them)
        b_report = msgspec.json.decode(current_report(log, base_id), type=ReportFigures)
        c_report = msgspec.json.decode(current_report(log, cand_id), type=ReportFigures)
    return compare_states(base, cand, gate, require_same_cases, variants, history, (b_report, c_report),
                          latency_across_machines=latency_across_machines)  # fmt: skip


def compare_states(
    base: RunState,
    cand: RunState,
    gate: GateSpec | None = None,
    require_same_cases: bool = False,
    variants: tuple[str, str] | None = None,
    history: Mapping[str, list[tuple[float, float]]] | None = None,
    reports: tuple[Reported, Reported] | None = None,
    columns: ComparedColumns | None = None,
    latency_across_machines: bool = False,
) -> RunComparison:
    """compare_runs on run states already folded (the web view keeps them folded). `history`: per
    candidate variant, (p95 ms, cost per trial) of the experiment's earlier runs (run_history.py);
    without it, or with too few runs, the run-to-run margins are the documented defaults. `reports`:
    the two runs' current reports when the caller has them (stored: no statistics to build again).
    `columns`: both runs' case columns when the caller has them built."""
    base_id, cand_id = base.run_id, cand.run_id
    assert base.spec is not None and cand.spec is not None
    gate = gate or cand.spec.gate
    warnings = case_set_warnings(base, cand)
    if warnings and require_same_cases:
        raise InputError(cand_id, "cases", "expected the same case set as the baseline run; " + warnings[0])
    warnings += spec_warnings(base, cand) + compared_days_warnings(base, cand)
    differences = spec_differences(base.spec, cand.spec) if base.spec_hash != cand.spec_hash else []
    shared = len({c.id for c in base.spec.cases} & {c.id for c in cand.spec.cases})
    if not shared:
        return RunComparison(
            baseline_run=base_id, candidate_run=cand_id, regressed=False, regressions=[], metrics=[],
            warnings=[*warnings, NOTHING], shared_cases=0, nothing_to_compare=True,
            spec_differences=differences,
        )  # fmt: skip
    pairs = chosen_variants(base, cand, variants) if variants else matched_variants(base, cand)
    if not pairs:
        raise InputError(
            cand_id, "variants", "expected at least one variant name shared with the baseline run"
        )
    level = 1 - gate.alpha / len(pairs)  # the ratio intervals, Bonferroni across the compared variants
    # each run's report once: building one folds every case's statistics
    b_built, c_built = reports or (build_report(base), None)  # type: ignore[assignment]
    b_reports = {v.name: v for v in b_built.variants}
    if cand is base:
        c_reports = b_reports
    else:
        c_reports = {v.name: v for v in (c_built or build_report(cand)).variants}
    columns = columns or ComparedColumns(base, cand)  # each run's cells read once, for every per-case test
    metrics = [
        m for b, c in pairs
        for m in variant_metrics(columns, (b_reports[b], c_reports[c]), gate, level,
                                 (history or {}).get(c, []))
    ]  # fmt: skip
    adjust_across_variants(metrics, gate)
    if not latency_across_machines:
        warnings += machines_apart(base, cand, metrics)
    regressions = [f"{m.variant}: {m.metric} {_describe(m)}" for m in metrics if m.regressed]
    failing, passing = case_changes(base, cand, pairs, gate.alpha, columns)
    regressions += [f"{c.variant}: case {c.case} went from {c.baseline} to {c.candidate} passing "
                    f"(Fisher's exact test, p (Holm) {p_value(c.p_value_adjusted)})"
                    for c in failing]  # fmt: skip
    erroring, _ = case_changes(base, cand, pairs, gate.alpha, columns, metric="error_rate")
    regressions += [f"{c.variant}: case {c.case} went from {c.baseline} to {c.candidate} erroring "
                    f"(Fisher's exact test, p (Holm) {p_value(c.p_value_adjusted)})"
                    for c in erroring]  # fmt: skip
    return RunComparison(
        baseline_run=base_id,
        candidate_run=cand_id,
        regressed=bool(regressions),
        regressions=regressions,
        warnings=warnings,
        shared_cases=shared,
        metrics=metrics,
        newly_failing=failing,
        newly_passing=passing,
        newly_erroring=erroring,
        spec_differences=differences,
    )


NOTHING = "nothing to compare: the runs share no case (a gate can neither pass nor fail them)"


def _describe(m: MetricDelta) -> str:
    return f"went from {m.baseline} to {m.candidate} (delta {m.delta:+.4g}, threshold {m.threshold:g})"
