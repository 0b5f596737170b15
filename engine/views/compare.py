"""`engine compare BASE CAND`: did the candidate run regress against the base run?

Metrics (the [gate] defaults, overridable in the candidate's [gate] table or on
the command line): pass rate and mean score (absolute drop, paired by case, a
drop counts only when significant after Holm across the variants, or untestable),
the error rate (errors per trial, paired by case: an absolute rise, the same test),
p95 latency and cost per trial (relative increase: the bootstrap interval of the
ratio must lie above 1 + threshold, at a level Bonferroni-corrected across the
variants), and each case on its own (Fisher's exact test over its replicas, Holm
across cases). Variants are matched by name; two single-variant runs are matched
whatever their names.
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from engine.errors import InputError
from engine.events.report import Latency, RunReport, VariantReport
from engine.events.spec import GateSpec
from engine.runtime.run_status import run_state
from engine.stats import inference as stats
from engine.stats.run_spread import margin
from engine.store.contract import EventStore
from engine.store.projections.report_builder import build_report
from engine.store.projections.run_state import RunState
from engine.store.projections.variant_report import stops_at_first_pass
from engine.store.unpacked import unpacked_once
from engine.views.case_changes import CaseChange, case_changes
from engine.views.compare_columns import ComparedColumns, paired_figures
from engine.views.compare_gates import (
    MetricDelta,
    cost_ratio,
    direction,
    informational,
    latency_ratio,
    relative,
)
from engine.views.current_report import current_report
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
) -> RunComparison:
    """`variants` = (baseline's, candidate's) compares those two only: any two experiments of one run
    (the same run id twice) or of two runs."""
    with unpacked_once():  # each state is read whole, then its head (is the stored report current?)
        base = run_state(log, base_id)
        cand = base if cand_id == base_id else run_state(log, cand_id)
        history = earlier_figures(log, base_id, cand_id)
        # the runs' current reports: stored ones while current (no statistics built again for them)
        b_report = msgspec.json.decode(current_report(log, base_id), type=ReportFigures)
        c_report = msgspec.json.decode(current_report(log, cand_id), type=ReportFigures)
    return compare_states(base, cand, gate, require_same_cases, variants, history, (b_report, c_report))


class VariantFigures(msgspec.Struct):
    """The figures of a variant's report a comparison reads (VariantReport's fields of the same names)."""

    name: str
    trials: int
    latency_ms: Latency
    cost_usd: float
    mean_tool_calls: float | None = None
    tool_success_rate: float | None = None


class ReportFigures(msgspec.Struct):
    """A run report read for its variants' figures only: its per-case sections (2 MB of JSON at
    10,000 cases) are skipped, not decoded."""

    variants: list[VariantFigures]


Reported = RunReport | ReportFigures
Figures = VariantReport | VariantFigures


def compare_states(
    base: RunState,
    cand: RunState,
    gate: GateSpec | None = None,
    require_same_cases: bool = False,
    variants: tuple[str, str] | None = None,
    history: Mapping[str, list[tuple[float, float]]] | None = None,
    reports: tuple[Reported, Reported] | None = None,
    columns: ComparedColumns | None = None,
) -> RunComparison:
    """compare_runs on run states already folded (the web view keeps them folded). `history`: per
    candidate variant, (p95 ms, cost per trial) of the experiment's earlier runs (run_history.py);
    without it, or with too few runs, the run-to-run margins are the documented defaults. `reports`:
    the two runs' current reports when the caller has them (stored: no statistics to build again).
    `columns`: both runs' case columns when the caller has them built."""
    base_id, cand_id = base.run_id, cand.run_id
    assert base.spec is not None and cand.spec is not None
    gate = gate or cand.spec.gate
    warnings = _case_set_warnings(base, cand)
    if warnings and require_same_cases:
        raise InputError(cand_id, "cases", "expected the same case set as the baseline run; " + warnings[0])
    warnings += _spec_warnings(base, cand)
    differences = spec_differences(base.spec, cand.spec) if base.spec_hash != cand.spec_hash else []
    shared = len({c.id for c in base.spec.cases} & {c.id for c in cand.spec.cases})
    if not shared:
        return RunComparison(
            baseline_run=base_id, candidate_run=cand_id, regressed=False, regressions=[], metrics=[],
            warnings=[*warnings, NOTHING], shared_cases=0, nothing_to_compare=True,
            spec_differences=differences,
        )  # fmt: skip
    pairs = _chosen_variants(base, cand, variants) if variants else _matched_variants(base, cand)
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
        for m in _variant_metrics(columns, (b_reports[b], c_reports[c]), gate, level,
                                  (history or {}).get(c, []))
    ]  # fmt: skip
    _adjust_across_variants(metrics, gate)
    regressions = [f"{m.variant}: {m.metric} {_describe(m)}" for m in metrics if m.regressed]
    failing, passing = case_changes(base, cand, pairs, gate.alpha, columns)
    regressions += [f"{c.variant}: case {c.case} went from {c.baseline} to {c.candidate} passing "
                    f"(Fisher, Holm-adjusted p {c.p_value_adjusted:.2g})" for c in failing]  # fmt: skip
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
        spec_differences=differences,
    )


NOTHING = "nothing to compare: the runs share no case (a gate can neither pass nor fail them)"


def _adjust_across_variants(metrics: list[MetricDelta], gate: GateSpec) -> None:
    """A drop counts when significant after Holm across the variants compared (3 variants in A/A
    flagged something in a third of pairs at an uncorrected alpha), or when it cannot be tested."""
    for name in ("pass_rate", "mean_score", "error_rate"):
        group = [m for m in metrics if m.metric == name]
        for m, adjusted in zip(group, stats.holm([m.p_value for m in group]), strict=True):
            m.p_value_adjusted = adjusted if adjusted is None else round(adjusted, 6)
            significant = adjusted is None or adjusted < gate.alpha
            m.regressed = m.delta is not None and _worse_by(m) > m.threshold and significant


def _worse_by(m: MetricDelta) -> float:
    """How far a paired metric moved the wrong way: a drop of pass rate or score, a rise of errors."""
    assert m.delta is not None
    return m.delta if m.metric == "error_rate" else -m.delta


def _describe(m: MetricDelta) -> str:
    return f"went from {m.baseline} to {m.candidate} (delta {m.delta:+.4g}, threshold {m.threshold:g})"


def _spec_warnings(base: RunState, cand: RunState) -> list[str]:
    """Runs of different specs are compared all the same; say which fields differ (cases: above)."""
    if base.spec_hash == cand.spec_hash:
        return []
    b, c = msgspec.structs.asdict(base.spec), msgspec.structs.asdict(cand.spec)  # type: ignore[arg-type]
    fields = [name for name in b if name not in ("cases", "suite", "suites") and b[name] != c.get(name)]
    return [f"the runs' specs differ in: {', '.join(fields)}"] if fields else []


def _case_set_warnings(base: RunState, cand: RunState) -> list[str]:
    assert base.spec is not None and cand.spec is not None
    b, c = {x.id for x in base.spec.cases}, {x.id for x in cand.spec.cases}
    if b == c:
        return []
    only = f"{len(b - c)} only in baseline, {len(c - b)} only in candidate"
    return [f"case sets differ: {only}; compared the {len(b & c)} shared cases"]


def _matched_variants(base: RunState, cand: RunState) -> list[tuple[str, str]]:
    shared = [name for name in cand.variants if name in base.variants]
    if shared:
        return [(name, name) for name in shared]
    if len(base.variants) == 1 and len(cand.variants) == 1:
        return [(next(iter(base.variants)), next(iter(cand.variants)))]
    return []


def _chosen_variants(base: RunState, cand: RunState, names: tuple[str, str]) -> list[tuple[str, str]]:
    for state, name, field in ((base, names[0], "--base-variant"), (cand, names[1], "--variant")):
        if name not in state.variants:
            known = ", ".join(state.variants)
            raise InputError(state.run_id, field, f"expected one of its variants ({known}), got {name!r}")
    return [names]


def _variant_metrics(
    columns: ComparedColumns, reports: tuple[Figures, Figures], gate: GateSpec,
    level: float, earlier: list[tuple[float, float]],
) -> list[MetricDelta]:  # fmt: skip
    base, cand = columns.base.state, columns.cand_columns.state
    b_report, c_report = reports
    b_name, c_name = b_report.name, c_report.name
    label = c_name if b_name == c_name else f"{b_name}->{c_name}"
    out = [
        _paired(columns, (b_name, c_name), label, "pass_rate", gate.max_pass_rate_drop, gate.alpha),
        _paired(columns, (b_name, c_name), label, "mean_score", gate.max_mean_score_drop, gate.alpha),
        _paired(columns, (b_name, c_name), label, "error_rate", gate.max_error_rate_increase, gate.alpha),
        relative(
            label, "p95_latency_ms", b_report.latency_ms.p95, c_report.latency_ms.p95,
            gate.max_p95_latency_increase, gate.min_latency_increase_ms,
            latency_ratio(base, cand, b_name, c_name, level),
            margin("latency", [p for p, _ in earlier], level),
        ),
        relative(
            label, "cost_usd", b_report.cost_usd, c_report.cost_usd, gate.max_cost_increase,
            gate.min_cost_increase_usd, cost_ratio(columns, b_name, c_name, level),
            margin("cost", [c for _, c in earlier], level), _per_trial_delta(b_report, c_report),
            _per_trial_ratio(b_report, c_report),
        ),
    ]  # fmt: skip
    for metric, higher_is_better in (("tool_success_rate", True), ("mean_tool_calls", False)):
        b_value, c_value = getattr(b_report, metric), getattr(c_report, metric)
        if b_value is not None or c_value is not None:  # agents that report their tool calls
            out.append(informational(label, metric, b_value, c_value, higher_is_better))
    return out


def _per_trial_delta(base: Figures, cand: Figures) -> float | None:
    """The change in cost per trial: the unit the cost floor is documented in."""
    if not base.trials or not cand.trials:
        return None
    return round(cand.cost_usd / cand.trials - base.cost_usd / base.trials, 9)


def _per_trial_ratio(base: Figures, cand: Figures) -> float | None:
    if not base.trials or not cand.trials or not base.cost_usd:
        return None
    return (cand.cost_usd / cand.trials) / (base.cost_usd / base.trials)


def _basis(state: RunState, metric: str) -> str:
    """The per-case value a paired metric compares (case_values' strategy, or error_rate)."""
    if metric in ("error_rate", "pass_rate"):  # errors are never neutral: a rise of them regresses alone
        return metric
    # as the report's mean_score: under early exit, the first attempt (see mean_score_basis)
    return "first_attempt" if stops_at_first_pass(state) else "mean"


def _paired(
    columns: ComparedColumns, names: tuple[str, str], label: str, metric: str, max_drop: float, alpha: float
) -> MetricDelta:
    base, cand = columns.base.state, columns.cand_columns.state
    b, c = columns.ratios(names, (_basis(base, metric), _basis(cand, metric)))
    assert cand.spec is not None
    b_mean, c_mean, result = paired_figures(b, c, seed=cand.spec.seed)
    if b_mean is None or c_mean is None or result is None:
        return MetricDelta(variant=label, metric=metric, baseline=b_mean, candidate=c_mean, delta=None,
                           threshold=max_drop, direction="unknown", regressed=False)  # fmt: skip
    delta = round(c_mean - b_mean, 6)
    significant = result.p_value is None or result.p_value < alpha
    row = MetricDelta(
        variant=label, metric=metric, baseline=round(b_mean, 6), candidate=round(c_mean, 6), delta=delta,
        threshold=max_drop, p_value=result.p_value,
        direction=direction(delta, higher_is_better=metric != "error_rate"), regressed=False,
    )  # fmt: skip
    row.regressed = _worse_by(row) > max_drop and significant
    return row
