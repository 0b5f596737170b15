"""Simulated label rounds: how often the judge-agreement section's 95% interval of Cohen's kappa covers
the true kappa.

    python benchmarks/sim_kappa.py [--runs 2000] [--seed 1]

A judge and people each pass an output with chance `pass rate`; their verdicts agree beyond chance by
the true kappa: the 2x2 table's cells are p^2 + k q, q (1 - k), q (1 - k), (1 - p)^2 + k q, q = p (1 - p).
Each line draws `runs` tables of n labels and prints the share whose interval holds k: the engine's
(stats/kappa.py) and, for comparison, Cohen's (1960) large-sample SE on the observed table. A table
where kappa is undefined (one verdict only) counts as not covered.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from engine.stats.kappa import Z95, cohen_kappa


def cohen_1960_covers(table: np.ndarray, kappa: float) -> bool:
    tp, fp, fn, tn = (int(c) for c in table)
    n = tp + fp + fn + tn
    po, judge, people = (tp + tn) / n, (tp + fp) / n, (tp + fn) / n
    pe = judge * people + (1 - judge) * (1 - people)
    if pe >= 1:
        return False
    estimate = (po - pe) / (1 - pe)
    half = Z95 * math.sqrt(po * (1 - po) / n) / (1 - pe)
    return estimate - half <= kappa <= estimate + half


def coverage(runs: int, rng: np.random.Generator, rate: float, kappa: float, n: int) -> tuple[float, float]:
    q = rate * (1 - rate)
    cells = [rate * rate + kappa * q, q * (1 - kappa), q * (1 - kappa), (1 - rate) ** 2 + kappa * q]
    ours = before = 0
    for table in rng.multinomial(n, cells, size=runs):
        found = cohen_kappa(*(int(c) for c in table))
        ours += found.low is not None and found.high is not None and found.low <= kappa <= found.high
        before += cohen_1960_covers(table, kappa)
    return ours / runs, before / runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"{args.runs} label rounds per line, seed {args.seed}: coverage of the true kappa (nominal 95%)")
    for rate in (0.5, 0.3):
        for kappa in (0.2, 0.5, 0.7, 0.9):
            for n in (30, 50, 100):
                ours, before = coverage(args.runs, rng, rate, kappa, n)
                line = f"  pass rate {rate:.1f}  kappa {kappa:.1f}  n {n:3}"
                print(f"{line}  engine {ours:6.1%}  Cohen 1960 {before:6.1%}")


if __name__ == "__main__":
    main()
