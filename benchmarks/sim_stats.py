"""Simulated experiments: does the report's paired test hold its error rate, how much power does it have
against a reference paired t-test on the same data, and do its intervals cover what they claim?

    python benchmarks/sim_stats.py [--runs 1000] [--small-only]

`--small-only` prints the small-suite lines alone (10, 20, 50 cases x 3 repeats: the paired test and
the error-rate row against the paired t-test); seeds are fixed per line (1-7), so a rerun prints the
same figures.

Each simulated experiment has CASES cases with REPEATS repeats per variant. A case's true pass chance is
the same for every case (homogeneous) or drawn per case from Beta(2, 2) (heterogeneous); a variant's
shift moves every case's chance. Per-case values are exact pass rates (k of REPEATS), as the report
pairs them; continuous runs use a score with case difficulty plus noise.
"""

from __future__ import annotations

import argparse
from fractions import Fraction

import numpy as np
import scipy.stats

from engine.stats import inference as stats
from engine.stats.sequential_looks import look_decision, look_level
from engine.stats.stratified import stratified_mid_p

CASES, REPEATS, ALPHA = 50, 3, 0.05


def case_chances(rng: np.random.Generator, kind: str, cases: int) -> np.ndarray:
    return rng.beta(2, 2, cases) if kind == "heterogeneous" else np.full(cases, 0.6)


def pass_rates(rng: np.random.Generator, chances: np.ndarray) -> list[Fraction]:
    return [Fraction(int(k), REPEATS) for k in rng.binomial(REPEATS, np.clip(chances, 0, 1))]


def scores(rng: np.random.Generator, difficulty: np.ndarray, shift: float) -> list[float]:
    return list(np.clip(difficulty + shift + rng.normal(0, 0.15, len(difficulty)), 0, 1))


def one_pair(rng: np.random.Generator, data: str, kind: str, shift: float, cases: int) -> tuple[list, list]:
    if data == "continuous":
        difficulty = case_chances(rng, kind, cases)
        return scores(rng, difficulty, 0.0), scores(rng, difficulty, shift)
    chances = case_chances(rng, kind, cases)
    return pass_rates(rng, chances), pass_rates(rng, chances + shift)


def rejection_rates(
    runs: int, data: str, kind: str, shift: float, seed: int, cases: int = CASES
) -> tuple[float, float, float]:
    """(share of runs where the report's test rejects, where a paired t-test does, engine's "winner")."""
    rng = np.random.default_rng(seed)
    ours = reference = winners = 0
    for i in range(runs):
        base, cand = one_pair(rng, data, kind, shift, cases)
        result = stats.paired_comparison(base, cand, seed=i, resamples=1)
        ours += result.p_value is not None and result.p_value < ALPHA
        winners += result.p_value is not None and result.p_value < ALPHA and (result.delta or 0) > 0
        diffs = np.array([float(c - b) for b, c in zip(base, cand, strict=True)])
        if diffs.any():
            reference += scipy.stats.ttest_1samp(diffs, 0.0).pvalue < ALPHA
    return ours / runs, reference / runs, winners / runs


def coverage(runs: int, seed: int, cases: int = 30, repeats: int = 10) -> tuple[float, float]:
    """How often the pass-rate intervals contain the population pass rate (0.5: Beta(2, 2) cases)."""
    rng = np.random.default_rng(seed)
    over_cases = per_trial = 0
    for _ in range(runs):
        passes = rng.binomial(repeats, rng.beta(2, 2, cases))
        lo, hi = stats.cluster_rate_ci95(passes.tolist(), [repeats] * cases) or (0.0, 1.0)
        over_cases += lo <= 0.5 <= hi
        w_lo, w_hi = stats.wilson_ci95(int(passes.sum()), cases * repeats) or (0.0, 1.0)
        per_trial += w_lo <= 0.5 <= w_hi
    return over_cases / runs, per_trial / runs


def sequential(runs: int, shift: float, seed: int, cases: int = 40, repeats: int = 8, looks: int = 4):
    """(share of runs with a significant winner, mean share of trials saved, the fixed design's rate)."""
    rng = np.random.default_rng(seed)
    wins = fixed_wins = 0
    saved = 0.0
    for i in range(runs):
        chances = rng.beta(6, 4, cases)  # heterogeneous cases around 0.6
        base = rng.random((cases, repeats)) < chances[:, None]
        cand = rng.random((cases, repeats)) < np.clip(chances + shift, 0, 1)[:, None]
        for look in range(1, looks + 1):
            used = -(-repeats * look // looks)
            rates = [[Fraction(int(k), used) for k in arm[:, :used].sum(axis=1)] for arm in (base, cand)]
            result = stats.paired_comparison(rates[0], rates[1], seed=i, resamples=1)
            level = look_level(ALPHA, look, looks)
            stop = look_decision([(result.p_value, result.delta)], level, look, looks)
            if stop:
                wins += result.p_value is not None and result.p_value < level and (result.delta or 0) > 0
                saved += 1 - used / repeats
                break
        full = [[Fraction(int(k), repeats) for k in arm.sum(axis=1)] for arm in (base, cand)]
        final = stats.paired_comparison(full[0], full[1], seed=i, resamples=1)
        fixed_wins += final.p_value is not None and final.p_value < ALPHA and (final.delta or 0) > 0
    return wins / runs, saved / runs, fixed_wins / runs


def small_suite(runs: int, cases: int, metric: str, shift: float, seed: int) -> tuple[float, float]:
    """(engine's rejection rate, the paired t's) on `cases` x REPEATS per-case shares: pass rates of
    Beta(2, 2) cases, or error rates with errors clustered on some cases (chance Beta(0.5, 4), mean 11%)
    as the error-rate row compares them (with its own test, stats/stratified.py)."""
    rng = np.random.default_rng(seed)
    ours = reference = 0
    for i in range(runs):
        chances = rng.beta(2, 2, cases) if metric == "pass rate" else rng.beta(0.5, 4, cases)
        base, cand = pass_rates(rng, chances), pass_rates(rng, chances + shift)
        if metric == "pass rate":
            p_value = stats.paired_comparison(base, cand, seed=i, resamples=1).p_value
        else:  # the error-rate row's own test: trial counts within each case (stats/stratified.py)
            pairs = zip(base, cand, strict=True)
            counts = [(int(b * REPEATS), REPEATS, int(c * REPEATS), REPEATS) for b, c in pairs]
            p_value = stratified_mid_p(counts)
        ours += p_value is not None and p_value < ALPHA
        diffs = np.array([float(c - b) for b, c in zip(base, cand, strict=True)])
        if diffs.any():
            reference += scipy.stats.ttest_1samp(diffs, 0.0).pvalue < ALPHA
    return ours / runs, reference / runs


SMALL_SHIFTS = {10: 0.2, 20: 0.15, 50: 0.1}  # about 40-50% power for the paired t at each size


def print_small_suites(runs: int) -> None:
    print(f"small suites, x {REPEATS} repeats: engine's paired test vs the paired t-test (A/A, then power)")
    for metric in ("pass rate", "error rate"):
        for cases, shift in SMALL_SHIFTS.items():
            aa, aa_t = small_suite(runs, cases, metric, 0.0, seed=6)
            power, power_t = small_suite(runs, cases, metric, shift, seed=7)
            print(f"  {metric:10} {cases:3} cases  A/A engine {aa:6.1%}  paired t {aa_t:6.1%}   "
                  f"+{shift:<4} engine {power:6.1%}  paired t {power_t:6.1%}  gap {power - power_t:+.1%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--small-only", action="store_true")
    args = parser.parse_args()
    runs = args.runs
    print_small_suites(runs)
    if args.small_only:
        return
    print(f"{runs} simulated experiments per line; {CASES} cases x {REPEATS} repeats; alpha {ALPHA}")
    print("A/A (no difference): the share of runs with p < alpha, engine vs paired t, and false winners")
    for data in ("binary", "continuous"):
        for kind in ("homogeneous", "heterogeneous"):
            ours, ref, wins = rejection_rates(runs, data, kind, 0.0, seed=1)
            print(f"  {data:10} {kind:13}  engine {ours:6.1%}  paired t {ref:6.1%}  false winner {wins:6.1%}")
    for cases in (8, 12):  # few changed cases: the exact sign-flip distribution, never above alpha
        ours, ref, wins = rejection_rates(runs, "binary", "heterogeneous", 0.0, seed=4, cases=cases)
        label = f"{cases} cases only"
        print(f"  binary     {label:13}  engine {ours:6.1%}  paired t {ref:6.1%}  false winner {wins:6.1%}")
    print("power (a real shift): engine vs paired t on the same data")
    for data, kind, shift in (("binary", "homogeneous", 0.1), ("binary", "heterogeneous", 0.1),
                              ("continuous", "heterogeneous", 0.05)):  # fmt: skip
        ours, ref, _ = rejection_rates(runs, data, kind, shift, seed=2)
        gap = ours - ref
        print(f"  {data:10} {kind:13} +{shift:<5} engine {ours:6.1%}  paired t {ref:6.1%}  gap {gap:+.1%}")
    over_cases, per_trial = coverage(runs, seed=3)
    print("coverage of the population pass rate, 30 cases x 10 repeats (nominal 95%)")
    print(f"  pass_rate_ci95 (over cases) {over_cases:6.1%}")
    print(f"  pass_rate_trial_ci95 (Wilson, per trial) {per_trial:6.1%}")
    print("sequential stopping ([stopping] rule = 'sequential', 4 looks), 40 cases x 8 repeats")
    for label, shift in (("A/A 0.6 vs 0.6", 0.0), ("clear 0.6 vs 0.75", 0.15)):
        wins, saved, fixed_wins = sequential(runs, shift, seed=5)
        print(f"  {label:18} winner {wins:6.1%} (fixed design {fixed_wins:6.1%})  trials saved {saved:6.1%}")


if __name__ == "__main__":
    main()
