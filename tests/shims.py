"""Small conveniences only tests call, kept out of engine's code: each is a thin view over what
engine itself uses."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.events.kind_convert import convert_kinded
from engine.events.targets import TargetSpec
from engine.stats.gates import spend_ratio_interval
from engine.stats.inference import mean_ci95
from engine.stats.student_t import t_sf
from engine.store.contract import EventStore
from engine.views.current_report import _current_stored


def target_spec(**fields: Any) -> TargetSpec:
    """A target spec from its fields, `kind` included (local when absent), checked like a file's."""
    return convert_kinded({"kind": "local", **fields}, TargetSpec)  # type: ignore[no-any-return]


def latest_report_hash(log: EventStore, run_id: str, grading: int | None = None) -> str | None:
    """The hash of the stored report that is the run's report now; None: it would be built."""
    found = _current_stored(log, run_id, grading)
    return None if found is None else found[0]


def mean_ratio_interval(
    base: Sequence[tuple[int, int]], cand: Sequence[tuple[int, int]], seed: int, level: float
) -> tuple[float, float] | None:
    """spend_ratio_interval over (spend, trials) pairs per case rather than its columns."""
    if not base:
        return None
    b_spend, b_trials = zip(*base, strict=True)
    c_spend, c_trials = zip(*cand, strict=True)
    return spend_ratio_interval((b_spend, b_trials), (c_spend, c_trials), seed, level)


def lower_ci_bound(values: Sequence[float]) -> float | None:
    """The lower end of mean_ci95."""
    ci = mean_ci95(values)
    return None if ci is None else ci[0]


def t_cdf(df: float, t: float) -> float:
    """P(T <= t) (scipy.special.stdtr(df, t))."""
    return t_sf(df, -t)
