"""A/A false alarms of `engine compare`'s gates, old rule against new, and the power of the new ones.

    python benchmarks/sim_gates.py [--pairs 1000]

Latency: two runs of 100 trials from one lognormal distribution; the old rule fired when p95 rose by
more than 20%, the new one when the bootstrap interval of the p95 ratio lies above 1.2 (with three
variants, each at a Bonferroni-corrected level). Per case: 8 cases x 10 replicas at the same pass
chance in both runs; a case fires when Fisher's exact test, Holm-corrected across cases, says so.
Error rate: 20 cases x 5 repeats, each case with its own chance of an error (errors cluster on some
cases: Beta-distributed around the run's rate); per case the errored trials, tested within each case
by the stratified test `engine compare`'s error-rate row uses (stats/stratified.py), Holm across the
variants, and a rise of more than 0.02; A/A pairs draw both runs from the same chances, a broken
candidate adds errors on top.
"""

from __future__ import annotations

import argparse

import numpy as np
from hdrh.histogram import HdrHistogram

from engine.stats import inference as stats
from engine.stats.gates import fisher_exact, p95_ratio_interval
from engine.stats.stratified import stratified_mid_p

ERROR_CASES, ERROR_REPEATS, ERROR_THRESHOLD = 20, 5, 0.02


def histogram(latencies_ms: np.ndarray) -> HdrHistogram:
    hist = HdrHistogram(1, 60_000_000, 3)
    for ms in latencies_ms:
        hist.record_value(max(1, round(ms * 1000)))
    return hist


def latency_alarms(pairs: int, variants: int, factor: float, seed: int) -> tuple[float, float]:
    """(share of comparisons where any variant fired: old rule, new rule)."""
    rng = np.random.default_rng(seed)
    old = new = 0
    level = 1 - 0.05 / variants
    for i in range(pairs):
        fired_old = fired_new = False
        for _ in range(variants):
            base, cand = rng.lognormal(3, 0.6, 100), rng.lognormal(3, 0.6, 100) * factor
            fired_old |= bool(np.percentile(cand, 95) > 1.2 * np.percentile(base, 95))
            lo, _ = p95_ratio_interval(histogram(base), histogram(cand), seed=i, level=level) or (0.0, 0.0)
            fired_new |= lo > 1.2
        old, new = old + fired_old, new + fired_new
    return old / pairs, new / pairs


def case_alarms(pairs: int, broken: bool, seed: int) -> float:
    rng = np.random.default_rng(seed)
    fired = 0
    for _ in range(pairs):
        chances = rng.uniform(0.5, 0.95, 8)
        base, cand = rng.binomial(10, chances), rng.binomial(10, chances)
        if broken:
            base[0], cand[0] = 10, 0
        p_values = [fisher_exact(int(b), 10, int(c), 10) for b, c in zip(base, cand, strict=True)]
        adjusted = stats.holm(p_values)
        worse = zip(adjusted, base, cand, strict=True)
        fired += any(a is not None and a < 0.05 and c < b for a, b, c in worse)
    return fired / pairs


def error_alarms(pairs: int, variants: int, rates: tuple[float, float], seed: int) -> float:
    """Share of comparisons where the error-rate gate fired for any variant: per-case error chances
    drawn around rates[0] for the baseline; the candidate's add errors so its mean is rates[1]."""
    rng = np.random.default_rng(seed)
    base_rate, cand_rate = rates
    extra = (cand_rate - base_rate) / (1 - base_rate)  # independent extra errors on top of each case's
    fired = 0
    for _ in range(pairs):
        p_values, deltas = [], []
        for _ in range(variants):
            chances = rng.beta(0.5, 0.5 * (1 - base_rate) / base_rate, ERROR_CASES)
            cand_chances = 1 - (1 - chances) * (1 - extra)
            base = rng.binomial(ERROR_REPEATS, chances)
            cand = rng.binomial(ERROR_REPEATS, cand_chances)
            counts = zip(base.tolist(), cand.tolist(), strict=True)  # the error-rate row's own test
            p_values.append(stratified_mid_p((b, ERROR_REPEATS, c, ERROR_REPEATS) for b, c in counts))
            deltas.append(float(np.mean(cand) - np.mean(base)) / ERROR_REPEATS)
        adjusted = stats.holm(p_values)
        fired += any(
            d > ERROR_THRESHOLD and (a is None or a < 0.05) for a, d in zip(adjusted, deltas, strict=True)
        )
    return fired / pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=1000)
    pairs = parser.parse_args().pairs
    print(f"{pairs} simulated comparisons per line")
    for variants in (1, 3):
        old, new = latency_alarms(pairs, variants, 1.0, seed=variants)
        print(f"  latency A/A, {variants} variant(s): old +20% rule {old:6.1%}   bootstrap rule {new:6.1%}")
    _, power = latency_alarms(pairs, 1, 1.6, seed=9)
    print(f"  latency +60%, 1 variant: bootstrap rule fires {power:6.1%}")
    print(f"  per-case A/A (8 cases x 10 replicas): {case_alarms(pairs, False, seed=4):6.1%}")
    print(f"  per-case, one case 10/10 -> 0/10: {case_alarms(pairs, True, seed=5):6.1%}")
    shape = f"{ERROR_CASES} cases x {ERROR_REPEATS} repeats"
    for variants in (1, 3):
        for rate in (0.05, 0.19):
            aa = error_alarms(pairs, variants, (rate, rate), seed=10 + variants)
            print(f"  error rate A/A at {rate:.0%}, {variants} variant(s), {shape}: {aa:6.1%}")
    for rates in ((0.19, 0.60), (0.10, 0.20), (0.05, 0.10)):
        power = error_alarms(pairs, 1, rates, seed=20)
        print(f"  error rate {rates[0]:.0%} -> {rates[1]:.0%}, 1 variant: fires {power:6.1%}")


if __name__ == "__main__":
    main()
