"""stats.student_t against scipy.special (the functions it stands in for, without their import)."""

from __future__ import annotations

import math

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from scipy.special import betainc as scipy_betainc
from scipy.special import stdtr, stdtrit

from engine.stats.student_t import betainc, t_ppf, t_sf
from tests.shims import t_cdf

DFS = [1, 2, 3, 4, 5, 7, 10, 19, 20, 30, 99, 500, 1000, 4999, 9999, 19999, 100000]
TS = [0.0, 1e-6, 0.01, 0.5, 1.0, 1.7, 1.96, 2.5, 4.0, 10.0, 30.0]


@pytest.mark.parametrize("df", DFS)
def test_tail_matches_scipy(df: int) -> None:
    for t in TS:
        for sign in (1.0, -1.0):
            assert t_sf(df, sign * t) == pytest.approx(float(stdtr(df, -sign * t)), rel=1e-10, abs=1e-300)
            assert t_cdf(df, sign * t) == pytest.approx(float(stdtr(df, sign * t)), rel=1e-10, abs=1e-300)


@pytest.mark.parametrize("df", DFS)
def test_quantile_matches_scipy(df: int) -> None:
    for p in (0.6, 0.9, 0.95, 0.975, 0.99, 0.999, 1 - 1e-9, 0.025, 1 - 0.05 / 6):
        assert t_ppf(df, p) == pytest.approx(float(stdtrit(df, p)), rel=1e-11)


def test_quantile_ends_and_centre() -> None:
    assert t_ppf(5, 0.5) == 0.0
    assert t_ppf(5, 1.0) == math.inf and t_ppf(5, 0.0) == -math.inf
    with pytest.raises(ValueError):
        t_ppf(5, 1.5)


# x normal or 0: at a subnormal x SciPy's own value is off (at x = 2^-1074, a = 0.5, b = 0.25 it gives
# 8.31e-163 where the leading term x^a / (a B(a, b)) is 8.48e-163, engine's value)
@given(
    a=st.floats(0.05, 1e5), b=st.floats(0.05, 1e5), x=st.floats(0.0, 1.0, allow_subnormal=False),
)  # fmt: skip
@example(a=95_000.0, b=5_001.0, x=0.95)  # the p95 of 100,000 trials: the latency gate's case
@example(a=0.5, b=0.5, x=1e-12)
@example(a=3.0, b=2.0, x=1.0)
def test_betainc_matches_scipy(a: float, b: float, x: float) -> None:
    expected = float(scipy_betainc(a, b, x))
    assert betainc(a, b, x) == pytest.approx(expected, rel=1e-8, abs=1e-280)
