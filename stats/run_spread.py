"""Run-to-run variation for the cross-run latency and cost gates of `engine compare`.

The gates' bootstrap intervals resample within each run, so they see only the noise of trials and
cases. Two runs of unchanged code also differ as wholes: a loaded machine slows every trial of a
run, a provider's day changes its answers' lengths. A shift like that is no regression, so the
gate allows a run-to-run margin:

- from the experiment's own history when it has at least MIN_RUNS earlier completed runs with the
  variant: the spread (standard deviation) of log p95 latency, or log cost per trial, across those
  runs. Two runs' log ratio then varies with sd sqrt(2) x spread, and the margin is the Student-t
  quantile (the gate's level) of that. The spread holds each run's own sampling noise as well, so
  the ratio divided by the margin is a prediction bound for two runs of unchanged code.
  Shrunk toward the default: 3-5 runs alone give a t with 2-4 degrees of freedom and a spread that
  is itself uncertain, so the margin came out +250-350% and hid a real 2x. The runs' variance is
  pooled with a prior variance worth PRIOR_DF degrees of freedom, the one whose own margin is the
  default (a scaled inverse-chi-square prior, as moderated t statistics do):
  s^2 = (PRIOR_DF s0^2 + (n - 1) s_runs^2) / (PRIOR_DF + n - 1), with t at PRIOR_DF + n - 1 degrees
  of freedom. Many runs outweigh the prior; a few lean on it.
- else a documented default, a worst case: latency DEFAULT_MARGIN["latency"] (whole runs on a
  shared machine differ by up to 15%), cost DEFAULT_MARGIN["cost"] (spend follows tokens, not the
  machine; a model's answers still vary a little in length between days). The ratio's bootstrap
  interval is divided by it, so a whole-run shift up to the margin never regresses on its own.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, NamedTuple

from engine.stats.student_t import t_ppf

MIN_RUNS = 3
PRIOR_DF = 4  # the default margin weighs as much as 5 earlier runs would
DEFAULT_MARGIN = {"latency": 0.15, "cost": 0.05}
Metric = Literal["latency", "cost"]


class Margin(NamedTuple):
    value: float  # the candidate/baseline ratio's interval is divided by 1 + value
    runs: int  # earlier runs it was estimated from; 0: the default


def log_spread(figures: Sequence[float]) -> float | None:
    """The sample standard deviation of log(figure) over positive figures; None below MIN_RUNS."""
    logs = [math.log(f) for f in figures if f > 0]
    if len(logs) < MIN_RUNS:
        return None
    mean = math.fsum(logs) / len(logs)
    return math.sqrt(math.fsum((x - mean) ** 2 for x in logs) / (len(logs) - 1))


def margin(metric: Metric, figures: Sequence[float], level: float) -> Margin:
    """The run-to-run margin from earlier runs' figures (p95 ms, or cost per trial), at the gate's
    two-sided `level` (1 - alpha / variants), shrunk toward the default (see the module's text)."""
    spread = log_spread(figures)
    if spread is None:
        return Margin(DEFAULT_MARGIN[metric], 0)
    runs = sum(1 for f in figures if f > 0)
    tail = 1 - (1 - level) / 2
    prior = math.log1p(DEFAULT_MARGIN[metric]) / (t_ppf(PRIOR_DF, tail) * math.sqrt(2))
    df = PRIOR_DF + runs - 1
    pooled = math.sqrt((PRIOR_DF * prior**2 + (runs - 1) * spread**2) / df)
    return Margin(round(math.expm1(t_ppf(df, tail) * math.sqrt(2) * pooled), 6), runs)
