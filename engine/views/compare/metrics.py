"""The metric rows of one compared variant pair (`engine compare`): pass rate, mean score and error
rate paired by case, p95 latency and cost per trial as ratios, agents' tool figures for information;
then Holm across the variants compared. compare.py assembles them into a RunComparison.
"""

from __future__ import annotations

import msgspec

from engine.events.report import Latency, Pace, RunReport, VariantReport
from engine.events.spec import GateSpec
from engine.stats import inference as stats
from engine.stats.run_spread import margin
from engine.stats.stratified import stratified_mid_p
from engine.store.projections.run_state import RunState
from engine.store.projections.variant_report import stops_at_first_pass
from engine.views.compare.columns import ComparedColumns, paired_figures
from engine.views.compare.gates import (
    MetricDelta,
    cost_ratio,
    direction,
    informational,
    latency_ratio,
    relative,
    ttft_ratio,
)


class VariantFigures(msgspec.Struct):
    """The figures of a variant's report a comparison reads (VariantReport's fields of the same names)."""

    name: str
    trials: int
    latency_ms: Latency
    cost_usd: float
    mean_tool_calls: float | None = None
    tool_success_rate: float | None = None
    ttft_ms: Pace | None = None
    tokens_per_s: Pace | None = None


class ReportFigures(msgspec.Struct):
    """A run report read for its variants' figures only: its per-case sections (most of its JSON
    at many cases: benchmarks/README.md#in-code-memory) are skipped, not decoded."""

    variants: list[VariantFigures]


Reported = RunReport | ReportFigures
Figures = VariantReport | VariantFigures


def adjust_across_variants(metrics: list[MetricDelta], gate: GateSpec) -> None:
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


def variant_metrics(
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
    out.extend(_pace_rows(columns, reports, gate, level, earlier, label))
    for metric, higher_is_better in (("tool_success_rate", True), ("mean_tool_calls", False)):
        b_value, c_value = getattr(b_report, metric), getattr(c_report, metric)
        if b_value is not None or c_value is not None:  # agents that report their tool calls
            out.append(informational(label, metric, b_value, c_value, higher_is_better))
    return out


def _pace_rows(
    columns: ComparedColumns, reports: tuple[Figures, Figures], gate: GateSpec,
    level: float, earlier: list[tuple[float, float]], label: str,
) -> list[MetricDelta]:  # fmt: skip
    """Streamed answers' rows, when either run streamed: p95 time to first token gated as latency is
    (its run-to-run margin is latency's: the earlier runs' p95 latency spread), tokens per second
    for information."""
    b_ttft, c_ttft = (_pace(r.ttft_ms) for r in reports)
    b_rate, c_rate = (_pace(r.tokens_per_s) for r in reports)
    if b_ttft is None and c_ttft is None:
        return []
    base, cand = columns.base.state, columns.cand_columns.state
    names = reports[0].name, reports[1].name
    b_p95, c_p95 = (None if p is None else p.p95 for p in (b_ttft, c_ttft))
    return [
        relative(
            label, "p95_ttft_ms", b_p95, c_p95, gate.max_p95_ttft_increase, gate.min_latency_increase_ms,
            ttft_ratio(base, cand, *names, level), margin("latency", [p for p, _ in earlier], level),
        ),
        informational(label, "tokens_per_s", b_rate and b_rate.mean, c_rate and c_rate.mean, True),
    ]  # fmt: skip


def _pace(figure: object) -> Pace | None:
    return figure if isinstance(figure, Pace) else None  # a report's UNSET (no streamed trial) is None


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
    p_value = result.p_value
    if metric == "error_rate":  # sparse, clustered errors: tested trial by trial within each case
        counts = zip(b.num.tolist(), b.den.tolist(), c.num.tolist(), c.den.tolist(), strict=True)
        p_value = stratified_mid_p(counts)
    significant = p_value is None or p_value < alpha
    row = MetricDelta(
        variant=label, metric=metric, baseline=round(b_mean, 6), candidate=round(c_mean, 6), delta=delta,
        threshold=max_drop, p_value=p_value,
        direction=direction(delta, higher_is_better=metric != "error_rate"), regressed=False,
    )  # fmt: skip
    row.regressed = _worse_by(row) > max_drop and significant
    return row
