"""The relative gates of `engine compare` (p95 latency, cost per trial) and the metric row they fill."""

from __future__ import annotations

import msgspec

from engine.stats.gates import p95_ratio_interval, spend_ratio_interval
from engine.stats.run_spread import Margin
from engine.store.projections.run_state import RunState
from engine.views.compare.columns import ComparedColumns, spend_pairs


class MetricDelta(msgspec.Struct, kw_only=True):
    variant: str
    metric: str
    baseline: float | None
    candidate: float | None
    delta: float | None
    threshold: float
    p_value: float | None = None
    direction: str  # better | worse | same | unknown
    regressed: bool
    p_value_adjusted: float | None = None  # Holm across the compared variants (pass rate, mean score)
    ratio_ci: list[float] | None = None  # latency and cost: bootstrap interval of candidate / baseline
    # latency and cost: the interval is divided by 1 + run_margin (run-to-run variation) before it is
    # held against 1 + threshold; run_margin_runs earlier runs gave it (0: the documented default)
    run_margin: float | None = None
    run_margin_runs: int | None = None
    delta_per_trial: float | None = None  # cost: the change in cost per trial, held against the floor
    note: str = ""  # why a row decides nothing ("not compared: different machines")


def latency_ratio(
    base: RunState, cand: RunState, b_name: str, c_name: str, level: float
) -> tuple[float, float] | None:
    b, c = base.totals.get(b_name), cand.totals.get(c_name)
    if b is None or c is None:
        return None
    assert cand.spec is not None
    return p95_ratio_interval(b.latency_us, c.latency_us, cand.spec.seed, level)


def ttft_ratio(
    base: RunState, cand: RunState, b_name: str, c_name: str, level: float
) -> tuple[float, float] | None:
    """The time-to-first-token gate's interval: as latency's, over the streamed trials' times."""
    b, c = base.totals.get(b_name), cand.totals.get(c_name)
    if b is None or c is None or b.pace is None or c.pace is None:
        return None
    assert cand.spec is not None
    return p95_ratio_interval(b.pace.ttft_us.ranks, c.pace.ttft_us.ranks, cand.spec.seed, level)


def cost_ratio(
    columns: ComparedColumns, b_name: str, c_name: str, level: float
) -> tuple[float, float] | None:
    """The cost gate's interval: spend per trial resampled by case, over the shared cases both ran."""
    b_spend, b_ran, c_spend, c_ran = spend_pairs(columns, b_name, c_name)
    seed = columns.cand_columns.state.spec.seed  # type: ignore[union-attr]
    return spend_ratio_interval((b_spend, b_ran), (c_spend, c_ran), seed, level)


def relative(
    label: str, metric: str, base: float | None, cand: float | None, max_increase: float, min_delta: float,
    ratio_ci: tuple[float, float] | None, margin: Margin, floor_delta: float | None = None,
    point: float | None = None,
) -> MetricDelta:  # fmt: skip
    """A rise regresses only when it clears 1 + max_increase beyond noise within a run and between
    runs, and by more than the absolute floor (below it, it does not matter).

    Within a run: the bootstrap interval of the ratio lies wholly above 1 + max_increase. Between
    runs: with the experiment's history, the ratio (`point`, by default cand / base) divided by
    1 + the margin from its earlier runs' spread clears it too (that spread already holds the
    within-run noise of runs of this size); without history, the interval divided by 1 + the
    default margin must clear it, so a whole-run shift up to the margin can never regress alone.
    `floor_delta` is what the floor is held against (cost: the change per trial)."""
    if base is None or cand is None:
        return MetricDelta(variant=label, metric=metric, baseline=base, candidate=cand, delta=None,
                           threshold=max_increase, direction="unknown", regressed=False)  # fmt: skip
    delta = round(cand - base, 6)
    floor = delta if floor_delta is None else floor_delta
    ratio = point if point is not None else (cand / base if base else None)
    clear = ratio_ci is not None and _clears(ratio_ci[0], ratio, margin, 1 + max_increase)
    return MetricDelta(
        variant=label, metric=metric, baseline=base, candidate=cand, delta=delta, threshold=max_increase,
        direction=direction(delta, higher_is_better=False), regressed=clear and floor > min_delta,
        ratio_ci=None if ratio_ci is None else list(ratio_ci), run_margin=margin.value,
        run_margin_runs=margin.runs, delta_per_trial=floor_delta,
    )  # fmt: skip


def _clears(lower: float, ratio: float | None, margin: Margin, bar: float) -> bool:
    if not margin.runs:
        return lower / (1 + margin.value) > bar
    return lower > bar and ratio is not None and ratio / (1 + margin.value) > bar


def informational(
    label: str, metric: str, base: float | None, cand: float | None, higher_is_better: bool
) -> MetricDelta:
    """A figure shown with its direction that gates nothing: an agent's own tool counts carry no
    noise model to test a change against."""
    delta = None if base is None or cand is None else round(cand - base, 6)
    return MetricDelta(
        variant=label, metric=metric, baseline=base, candidate=cand, delta=delta, threshold=0.0,
        direction="unknown" if delta is None else direction(delta, higher_is_better), regressed=False,
    )  # fmt: skip


def direction(delta: float, higher_is_better: bool) -> str:
    if delta == 0:
        return "same"
    return "better" if (delta > 0) == higher_is_better else "worse"
