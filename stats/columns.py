"""The comparison's statistics on per-case columns (numpy arrays): the same numbers as the per-case
Python paths (inference.mean, ScaledDifferences.of, inference.holm, gates.fisher_exact), without a
Fraction, a dict lookup or a tuple per case.

Per-case values come as exact ratios: integer numerators and denominators (a pass rate is passes over
scored repeats, a mean score the fixed-point sum over scored repeats x SCALE). Every step either is
integer arithmetic (checked to stay inside int64, else done on Python ints) or one IEEE operation on
exactly represented operands (correctly rounded, as Python's int / int is), so each figure is the
float the Python path gives. tests/test_stats_columns.py holds the two side by side.

numpy is imported inside the functions (see inference.py: `engine --help` computes nothing).
"""

from __future__ import annotations

import math
from typing import Any

from engine.stats.inference import _r
from engine.stats.signflip import ScaledDifferences

_INT64_SAFE = 1 << 62  # products below this cannot overflow a signed 64-bit add of two of them
_FLOAT_EXACT = 1 << 53  # integers up to this are exact doubles


def _as_floats(num: Any, den: Any) -> list[float]:
    """num / den per value, as Python's int / int gives (correctly rounded)."""
    import numpy as np

    if len(num) and max(int(np.abs(num).max()), int(den.max())) <= _FLOAT_EXACT:
        return (num.astype(float) / den.astype(float)).tolist()  # both exact: IEEE division rounds correctly
    return [n / d for n, d in zip(num.tolist(), den.tolist(), strict=True)]


def ratio_mean(num: Any, den: Any) -> float | None:
    """inference.mean of the values num[i] / den[i] (den > 0)."""
    if not len(num):
        return None
    return _r(math.fsum(_as_floats(num, den)) / len(num))


def scaled_differences(b_num: Any, b_den: Any, c_num: Any, c_den: Any) -> ScaledDifferences:
    """ScaledDifferences.of(baseline, candidate) for the values b_num / b_den and c_num / c_den (each
    den > 0): the same integers over the same common denominator (the lcm of the reduced ones)."""
    import numpy as np

    if len(b_num) != len(c_num):
        raise ValueError(f"need equal lengths, got {len(b_num)} and {len(c_num)}")
    if not len(b_num):
        return ScaledDifferences([], 1)
    bn, bd = _reduced(b_num, b_den)
    cn, cd = _reduced(c_num, c_den)
    scale = math.lcm(1, *np.unique(bd).tolist(), *np.unique(cd).tolist())
    top = max(
        int(np.abs(bn).max()) * (scale // int(bd.min())), int(np.abs(cn).max()) * (scale // int(cd.min()))
    )
    if max(top, scale) >= _INT64_SAFE:  # Python ints: exact whatever their size
        bn, bd, cn, cd = (a.astype(object) for a in (bn, bd, cn, cd))
    ints = cn * (scale // cd) - bn * (scale // bd)
    return ScaledDifferences([int(i) for i in ints.tolist()], scale)


def _reduced(num: Any, den: Any) -> tuple[Any, Any]:
    """num / den in lowest terms (the sign on the numerator), as Fraction keeps them."""
    import numpy as np

    common = np.gcd(num, den)  # 0 / d: gcd d, so 0 / 1 as Fraction has it (den > 0: never 0)
    return num // common, den // common


def holm_array(p_values: Any) -> Any:
    """inference.holm of p-values with none missing, as a float array: sorted with ties in their
    given order, each (m - rank) x p capped at 1, the running maximum rounded as holm rounds it."""
    import numpy as np

    p = np.asarray(p_values, dtype=float)
    if not np.all((p >= 0.0) & (p <= 1.0)):
        raise ValueError(f"p-values must lie in [0, 1], got {p.tolist()}")
    m = len(p)
    order = np.argsort(p, kind="stable")
    ranked = p[order]
    running = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * ranked))
    distinct, back = np.unique(running, return_inverse=True)  # a few distinct values, many cases
    rounded = np.array([_r(x) for x in distinct.tolist()], dtype=float)[back]
    out = np.empty(m)
    out[order] = np.maximum(ranked, rounded)
    return out


def fisher_by_table(tables: Any) -> Any:
    """gates.fisher_exact of each row (passes_a, runs_a, passes_b, runs_b) of an int array, computed
    once per distinct table (a suite's cases share a few)."""
    import numpy as np

    from engine.stats.gates import fisher_exact

    if not len(tables):
        return np.empty(0)
    tables = np.asarray(tables, dtype=np.int64)
    if int(tables.max()) < 1 << 15:  # one int64 key per table: np.unique of rows sorts far slower
        keys = (tables[:, 0] << 45) | (tables[:, 1] << 30) | (tables[:, 2] << 15) | tables[:, 3]
        distinct_keys, back = np.unique(keys, return_inverse=True)
        distinct = np.stack([(distinct_keys >> shift) & 0x7FFF for shift in (45, 30, 15, 0)], axis=1)
    else:
        distinct, back = np.unique(tables, axis=0, return_inverse=True)
    found = np.array([fisher_exact(*row) for row in distinct.tolist()], dtype=float)
    return found[back.reshape(-1)]
