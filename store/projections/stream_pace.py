"""Streamed answers' pace per variant (targets with stream = true): time to first token and tokens per
second, folded from the trials' AgentReport and reported with a t-interval of the mean (over trials)
and nearest-rank percentiles.

The sums are integers (microseconds, thousandths of a token per second) so a replay folds the same
figures to the same bytes in any process.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from hdrh.histogram import HdrHistogram

from engine.events.report import Pace
from engine.stats.comparisons import rnd
from engine.stats.histograms import nearest_ranks
from engine.stats.inference import t_quantile_975

PACE_MAX = 24 * 3600 * 1_000_000  # a day in microseconds; beyond is a broken figure, clamped


@dataclass(slots=True)
class Moments:
    """Count, sum and sum of squares of integer figures: the mean and its interval, exactly."""

    n: int = 0
    total: int = 0
    squares: int = 0
    ranks: HdrHistogram = field(default_factory=lambda: HdrHistogram(1, PACE_MAX, 3))

    def add(self, value: int) -> None:
        value = min(max(1, value), PACE_MAX)
        self.n, self.total, self.squares = self.n + 1, self.total + value, self.squares + value * value
        self.ranks.record_value(value)

    def report(self, scale: float) -> Pace:
        """The figures divided by `scale` (1000: microseconds to ms)."""
        mean = self.total / self.n / scale
        ci = [rnd(mean), rnd(mean)]
        if self.n > 1:  # n * squares - total^2 is exact in integers: no cancellation in floats
            sd = math.sqrt((self.n * self.squares - self.total**2) / (self.n * (self.n - 1))) / scale
            half = t_quantile_975(self.n - 1) * sd / math.sqrt(self.n)
            ci = [rnd(mean - half), rnd(mean + half)]
        p50, p95 = nearest_ranks(self.ranks, [50, 95]) or (0, 0)
        return Pace(n=self.n, mean=rnd(mean), ci95=ci, p50=rnd(p50 / scale), p95=rnd(p95 / scale))


@dataclass(slots=True)
class PaceTotals:
    ttft_us: Moments = field(default_factory=Moments)
    rate_milli: Moments = field(default_factory=Moments)  # tokens per second, in thousandths

    def add(self, ttft_ms: float, tokens_per_s: float | None) -> None:
        self.ttft_us.add(round(ttft_ms * 1000))
        if tokens_per_s is not None:
            self.rate_milli.add(round(tokens_per_s * 1000))


def pace_reports(pace: PaceTotals | None) -> tuple[Pace | None, Pace | None]:
    """(ttft_ms, tokens_per_s) for a variant's report; None where no streamed trial gave the figure."""
    if pace is None:
        return None, None
    ttft = pace.ttft_us.report(1000) if pace.ttft_us.n else None
    rate = pace.rate_milli.report(1000) if pace.rate_milli.n else None
    return ttft, rate
