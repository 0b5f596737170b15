"""Paired comparisons of each candidate with the baseline, case by case, Holm-adjusted.

Rounding lives here too (the report and the comparisons share it): floats are
rounded to DIGITS so the same state always renders the same bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from numbers import Real

from engine.events.report import Comparison, VariantReport
from engine.stats import inference

DIGITS = 6


def rnd(value: float | None) -> float | None:
    return None if value is None else round(value, DIGITS)


def rnd_pair(pair: tuple[float, float] | None) -> list[float] | None:
    return None if pair is None else [round(pair[0], DIGITS), round(pair[1], DIGITS)]


def compare_cases(
    base: Mapping[str, Real], cand: Mapping[str, Real], seed: int, resamples: int = 2000
) -> inference.PairedResult:
    """The one paired comparison by case: the report, tuning decisions and `engine compare` all use it.

    Cases are paired by id (in the baseline's order); pass/fail, pass rates and scores take the same
    test, exactly on the Fractions `case_values` gives. `seed` is the experiment's (for `compare`, the
    candidate run's): the same data always gives the same interval.
    """
    shared = [c for c in base if c in cand]
    b_vals, c_vals = [base[c] for c in shared], [cand[c] for c in shared]
    return inference.paired_comparison(b_vals, c_vals, seed=seed, resamples=resamples)


def compare_all(
    baseline: str | None, names: list[str], per_case: dict[str, dict[str, float]], seed: int, alpha: float
) -> list[Comparison]:
    if baseline is None:
        return []
    raw = [(name, compare_cases(per_case[baseline], per_case[name], seed)) for name in names[1:]]
    adjusted = inference.holm([r.p_value for _, r in raw])
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


def tied_with_winner(
    winner: str | None,
    means: Mapping[str, float | None],
    per_case: Mapping[str, Mapping[str, Real]],
    seed: int,
    alpha: float,
) -> tuple[list[str], float | None]:
    """(the variants the winner is not separated from, the winner first; the p-value against the
    runner-up). "Best" needs the winner to beat each other variant on its own evidence (an
    intersection-union test: each at alpha, no correction), not only the baseline."""
    others = [n for n, m in means.items() if n != winner and m is not None]
    if winner is None or not others:
        return [], None
    runner_up = max(others, key=lambda n: means[n] or 0.0)
    tied = [winner]
    runner_up_p = None
    for name in sorted(others, key=lambda n: -(means[n] or 0.0)):
        result = compare_cases(per_case[name], per_case[winner], seed, resamples=1)  # its p only
        if name == runner_up:
            runner_up_p = rnd(result.p_value)
        if result.p_value is None or result.p_value >= alpha or (result.delta or 0.0) <= 0:
            tied.append(name)
    return (tied if len(tied) > 1 else []), runner_up_p
