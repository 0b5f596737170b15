"""The error-rate row's test (stats/stratified.py): the exact stratified permutation test of trial
counts by case, held to a brute-force enumeration and to SciPy's hypergeometric distribution; its
normal form against its exact one; and on a small suite whose errors are sparse, a rise the sign-flip
test on per-case rates cannot see regresses `compare --gate`."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.stats import stratified
from engine.stats.stratified import stratified_mid_p
from engine.views.compare.comparison import compare_states
from tests.gate_runs import simulated_run

Case = tuple[int, int, int, int]


def _brute_force(cases: list[Case]) -> float | None:
    """Every way the cases' errored trials could have split between the runs, weighed by its chance."""
    paired = [c for c in cases if c[1] and c[3]]
    informative = [c for c in paired if 0 < c[0] + c[2] < c[1] + c[3]]
    if not informative:
        return 1.0 if paired else None
    choices = []
    for b_bad, b_n, c_bad, c_n in informative:
        bad, n = b_bad + c_bad, b_n + c_n
        choices.append([(x, math.comb(bad, x) * math.comb(n - bad, c_n - x) / math.comb(n, c_n))
                        for x in range(0, min(bad, c_n) + 1) if c_n - x <= n - bad])  # fmt: skip
    observed = sum(c[2] for c in informative)
    below = at = above = 0.0
    for combination in itertools.product(*choices):
        total, chance = sum(x for x, _ in combination), math.prod(p for _, p in combination)
        if total < observed:
            below += chance
        elif total == observed:
            at += chance
        else:
            above += chance
    return min(1.0, 2 * min(below, above) + at)


tables = st.lists(
    st.tuples(st.integers(0, 3), st.integers(1, 3), st.integers(0, 3), st.integers(1, 3)).map(
        lambda t: (min(t[0], t[1]), t[1], min(t[2], t[3]), t[3])
    ),
    min_size=1, max_size=6,
)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(tables)
def test_the_exact_p_is_the_enumerated_one(cases: list[Case]) -> None:
    ours, expected = stratified_mid_p(cases), _brute_force(cases)
    assert (ours is None) == (expected is None)
    if ours is not None:
        assert ours == pytest.approx(expected, abs=1e-12)


def test_one_case_is_scipys_hypergeometric_mid_p() -> None:
    # 0 of 5 baseline trials errored, 4 of 5 candidate ones: 4 errored trials among 10, 5 drawn
    dist = scipy.stats.hypergeom(10, 4, 5)
    mid_upper = dist.sf(4) + dist.pmf(4) / 2
    assert stratified_mid_p([(0, 5, 4, 5)]) == pytest.approx(min(1.0, 2 * mid_upper))


def test_cases_that_say_nothing_are_left_out() -> None:
    assert stratified_mid_p([(0, 3, 0, 3), (3, 3, 3, 3), (0, 0, 2, 3)]) == 1.0  # no case could tell
    assert stratified_mid_p([(0, 0, 2, 3)]) is None  # no case both finished
    assert stratified_mid_p([(0, 3, 0, 3), (0, 3, 3, 3)]) == stratified_mid_p([(0, 3, 3, 3)])


def test_the_normal_form_agrees_with_the_exact_one_on_many_cases(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(3)
    chances = rng.beta(0.5, 4, 600)
    cases = [(int(rng.binomial(3, p)), 3, int(rng.binomial(3, min(1.0, p + 0.02))), 3) for p in chances]
    normal = stratified_mid_p(cases)
    monkeypatch.setattr(stratified, "EXACT_CASES", 10_000)
    exact = stratified_mid_p(cases)
    assert normal is not None and exact is not None
    assert normal == pytest.approx(exact, abs=0.01)


def test_a_sparse_rise_of_errors_on_ten_cases_regresses_the_gate() -> None:
    # 10 cases x 3 repeats: the baseline errs once in all; the candidate errs on every repeat of two
    # cases and once on a third. The sign flip on per-case rates sees 4 changed cases of 10 (p 0.25);
    # trial by trial within each case, 7 of the 8 errored trials fell in the candidate's (p 0.014).
    base_errors = {("c00", 0)}
    cand_errors = {("c01", r) for r in range(3)} | {("c02", r) for r in range(3)} | {("c03", 1)}

    def trials(errors: set[tuple[str, int]]):  # type: ignore[no-untyped-def]
        def trial(variant: str, case: str, repeat: int) -> tuple[float, float, bool | None]:
            return (100.0, 0.0, None) if (case, repeat) in errors else (100.0, 0.001, True)

        return trial

    base = simulated_run("base", ["v0"], 10, 3, trials(base_errors))
    cand = simulated_run("cand", ["v0"], 10, 3, trials(cand_errors))
    result = compare_states(base, cand)
    errors = next(m for m in result.metrics if m.metric == "error_rate")
    assert errors.p_value is not None and errors.p_value < 0.05
    assert errors.direction == "worse" and errors.regressed and result.regressed


def test_cases_of_a_thousand_repeats_do_not_overflow() -> None:
    # C(2000, 1000) is far past a float: the chances are exact int ratios, rounded once
    p = stratified_mid_p([(100, 1000, 140, 1000)])
    normal = stratified._normal_p([(240, 2000, 1000, 140)])
    assert p is not None and 0.0 < p < 0.05 and p == pytest.approx(normal, rel=0.2)
