"""Paired comparisons of each candidate with the baseline, case by case, Holm-adjusted.

Rounding lives here too (the report and the comparisons share it): floats are
rounded to DIGITS so the same state always renders the same bytes.
"""

from __future__ import annotations

from engine.events.report import Comparison, VariantReport
from engine.store import stats

DIGITS = 6


def rnd(value: float | None) -> float | None:
    return None if value is None else round(value, DIGITS)


def rnd_pair(pair: tuple[float, float] | None) -> list[float] | None:
    return None if pair is None else [round(pair[0], DIGITS), round(pair[1], DIGITS)]


def compare_cases(base: dict[str, float], cand: dict[str, float], seed: int) -> stats.PairedResult:
    """The one paired comparison by case: the report, tuning decisions and `engine compare` all use it.

    Cases are paired by id (in the baseline's order); values that are all 0 or 1 are pass/fail, the
    rest scores. `seed` is the experiment's (for `compare`, the candidate run's): the same data always
    gives the same interval.
    """
    shared = [c for c in base if c in cand]
    b_vals, c_vals = [base[c] for c in shared], [cand[c] for c in shared]
    binary = all(v in (0.0, 1.0) for v in b_vals + c_vals)
    return stats.paired_comparison(b_vals, c_vals, binary=binary, seed=seed)


def compare_all(
    baseline: str | None, names: list[str], per_case: dict[str, dict[str, float]], seed: int, alpha: float
) -> list[Comparison]:
    if baseline is None:
        return []
    raw = [(name, compare_cases(per_case[baseline], per_case[name], seed)) for name in names[1:]]
    adjusted = stats.holm([r.p_value for _, r in raw])
    return [
        Comparison(
            candidate=name,
            baseline=baseline,
            metric="score",
            delta=rnd(r.delta),
            ci95=rnd_pair(r.ci95),
            p_value=rnd(r.p_value),
            p_value_adjusted=rnd(adj),
            test=r.test,
            n_pairs=r.n_pairs,
            significant=adj is not None and adj < alpha,
        )
        for (name, r), adj in zip(raw, adjusted, strict=True)
    ]


def add_relative_figures(comparisons: list[Comparison], by_name: dict[str, VariantReport]) -> None:
    for c in comparisons:
        base, cand = by_name[c.baseline], by_name[c.candidate]
        if base.pass_rate is not None and cand.pass_rate is not None:
            c.pass_rate_delta = rnd(cand.pass_rate - base.pass_rate)
        if c.delta is not None and base.strategy_score:
            c.relative_improvement = rnd(c.delta / base.strategy_score)
