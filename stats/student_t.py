"""Student's t distribution and the regularized incomplete beta function, in plain Python.

The reports need three special functions: the t distribution's tail (a paired test's p-value), its
quantile (a confidence interval's half-width) and the regularized incomplete beta function (the
latency gate's order statistics). SciPy has them, but importing scipy.special costs more than
building a 100,000-trial run's report (benchmarks/README.md#in-code-start-up). These agree with
scipy.special (stdtr, stdtrit, betainc) to about 1e-13 relative (tests/test_student_t.py checks a
grid of them), well inside the 12 significant digits the statistics are rounded to.

The incomplete beta is Lentz's continued fraction (Numerical Recipes 6.4), on the side of the
symmetry I_x(a, b) = 1 - I_1-x(b, a) where it converges fast, so a small tail is computed as
itself, never as 1 minus a number close to 1.
"""

from __future__ import annotations

import math

_TINY = 1e-300
_EPS = 1e-16
_MAX_TERMS = 100_000


_STIRLING_FROM = 10.0
_HALF_LN_2PI = 0.5 * math.log(2.0 * math.pi)


def _ln_beta(a: float, b: float) -> float:
    """ln B(a, b). lgamma of a large argument is a large number: the difference of three of them
    would lose digits (1e-10 relative at a = 50,000), so large arguments take Stirling's series
    written as differences of logarithms of ratios, which stay small."""
    small, big = min(a, b), max(a, b)
    if big < _STIRLING_FROM:
        return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    total = small + big
    # ln G(big) - ln G(big + small), from (x - 1/2) ln x - x + ln(2 pi) / 2 + w(x)
    ratio = -(big - 0.5) * math.log1p(small / big) - small * math.log(total) + small
    ratio += _stirling_rest(big) - _stirling_rest(total)
    if small < _STIRLING_FROM:
        return math.lgamma(small) + ratio
    # ln G(small) by Stirling too: -small cancels the +small above
    return (small - 0.5) * math.log(small) + _HALF_LN_2PI + _stirling_rest(small) + ratio - small


def _stirling_rest(x: float) -> float:
    """ln G(x) - ((x - 1/2) ln x - x + ln(2 pi) / 2): Stirling's series (x >= 10: error < 1e-13)."""
    inv = 1.0 / x
    inv2 = inv * inv
    return inv * (1 / 12 - inv2 * (1 / 360 - inv2 * (1 / 1260 - inv2 * (1 / 1680 - inv2 / 1188))))


def _continued_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of I_x(a, b) (it converges fast for x < (a + 1) / (a + b + 2))."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, _MAX_TERMS):
        m2 = 2 * m
        even = m * (b - m) * x / ((qam + m2) * (a + m2))
        odd = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        for numerator in (even, odd):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + numerator / c
            c = c if abs(c) > _TINY else _TINY
            step = d * c
            h *= step
        if abs(step - 1.0) < _EPS:
            return h
    raise ArithmeticError(f"incomplete beta did not converge for a={a}, b={b}, x={x}")


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b), for a, b > 0 and 0 <= x <= 1."""
    if not (a > 0 and b > 0 and 0.0 <= x <= 1.0):
        raise ValueError(f"betainc needs a, b > 0 and 0 <= x <= 1, got a={a}, b={b}, x={x}")
    if x == 0.0 or x == 1.0:
        return x
    if x < (a + 1.0) / (a + b + 2.0):
        return _front(a, b, x) * _continued_fraction(a, b, x) / a
    return 1.0 - _front(b, a, 1.0 - x) * _continued_fraction(b, a, 1.0 - x) / b


def _front(a: float, b: float, x: float) -> float:
    """x^a (1 - x)^b / B(a, b), in logarithms (a and b may be in the thousands)."""
    return math.exp(a * math.log(x) + b * math.log1p(-x) - _ln_beta(a, b))


def t_sf(df: float, t: float) -> float:
    """P(T > t) for Student's t with `df` degrees of freedom (scipy.special.stdtr(df, -t))."""
    if math.isinf(t):
        return 0.0 if t > 0 else 1.0
    if t == 0.0:
        return 0.5
    tail = 0.5 * _tail_beta(df, t * t)
    return tail if t > 0 else 1.0 - tail


def _tail_beta(df: float, t2: float) -> float:
    """P(|T| > t) = I_{df / (df + t^2)}(df / 2, 1 / 2), its x taken without cancellation."""
    x = df / (df + t2)
    a, b = df / 2.0, 0.5
    if x < (a + 1.0) / (a + b + 2.0):
        return _front(a, b, x) * _continued_fraction(a, b, x) / a
    one_minus_x = t2 / (df + t2)  # 1 - x exactly as a ratio: small when t is small
    return 1.0 - _front(b, a, one_minus_x) * _continued_fraction(b, a, one_minus_x) / b


def t_ppf(df: float, p: float) -> float:
    """The t quantile: the t with P(T <= t) = p (scipy.special.stdtrit(df, p)), by Newton's method
    on the tail from a normal-based start; bisection keeps it bracketed."""
    if not 0.0 < p < 1.0:
        if p in (0.0, 1.0):
            return -math.inf if p == 0.0 else math.inf
        raise ValueError(f"t quantile needs 0 <= p <= 1, got {p}")
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -t_ppf(df, 1.0 - p)
    q = 1.0 - p  # the upper tail wanted
    lo, hi = 0.0, 1.0
    while t_sf(df, hi) > q:  # bracket the quantile
        lo, hi = hi, hi * 2.0
    t = min(max(_start(df, q), lo), hi)
    for _ in range(200):
        err = t_sf(df, t) - q  # positive: t is too small
        if err > 0:
            lo = t
        else:
            hi = t
        step = err / _pdf(df, t)
        nxt = t + step
        if not lo <= nxt <= hi:
            nxt = (lo + hi) / 2.0
        if abs(nxt - t) <= 1e-15 * max(1.0, abs(t)):
            return nxt
        t = nxt
    return t


def _pdf(df: float, t: float) -> float:
    log = -0.5 * (df + 1.0) * math.log1p(t * t / df) - 0.5 * math.log(df) - _ln_beta(0.5 * df, 0.5)
    return math.exp(log)


def _start(df: float, q: float) -> float:
    """A first guess of the upper-q quantile: the normal's, widened for small df (Cornish-Fisher)."""
    z = _normal_isf(q)
    g1 = (z**3 + z) / 4.0
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96.0
    return z + g1 / df + g2 / df**2


def _normal_isf(q: float) -> float:
    """The standard normal's upper-q quantile, to a few digits (a starting point only)."""
    # Abramowitz and Stegun 26.2.23
    t = math.sqrt(-2.0 * math.log(q if q <= 0.5 else 1.0 - q))
    top = 2.515517 + 0.802853 * t + 0.010328 * t * t
    z = t - top / (1 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t**3)
    return z if q <= 0.5 else -z
