"""The pairwise judge's preference test, and early exit's score, simulated.

Pairwise: each simulated run has C cases x R repeats of verdicts (win, tie or loss for the
candidate). Every case has its own lean (the judge prefers the candidate's answer to some cases,
the baseline's to others); in A/A runs the leans are symmetric, so there is no preference overall.
The per-verdict sign test (what the report used before) counts every repeat as independent
evidence; the case-level test (what it uses now: each case's mean preference in the paired
sign-flip test, `case_preference`) takes the case as its unit. Reported: the share of runs each
calls significant at 0.05, A/A and with a real overall preference.

Early exit: under pass_at_k with early exit a case's attempts stop at its first pass. The old
`mean_score` averaged each case's attempts that ran; the report now takes each case's first scored
attempt. Reported: both estimates' mean over simulated runs against the true per-attempt score.

    .venv/bin/python benchmarks/sim_pairwise.py [--runs N] [--quick]   # ~1 min at 2000 runs
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.store.projections.pairwise_verdicts import binomial_two_sided, case_preference  # noqa: E402

ALPHA = 0.05
# (cases, repeats, case leans +- spread, overall shift of the candidate's win chance)
SCENARIOS = [(20, 5, 0.5, 0.0), (20, 5, 0.35, 0.0), (20, 5, 0.2, 0.0), (20, 5, 0.0, 0.0), (50, 3, 0.5, 0.0),
             (20, 5, 0.35, 0.15), (20, 5, 0.35, 0.25), (20, 5, 0.0, 0.15)]  # fmt: skip


def pairwise_run(rng: np.random.Generator, cases: int, repeats: int, spread: float, shift: float) -> dict:
    """case -> [wins, ties, losses]: a case's chance of a candidate win is 0.5 + shift + its lean
    (uniform in +-spread, clipped); one verdict in ten is a tie."""
    out = {}
    for case in range(cases):
        p_win = float(np.clip(0.5 + shift + rng.uniform(-spread, spread), 0.0, 1.0))
        draws = rng.random(repeats)
        ties = draws < 0.1
        wins = int(np.sum(~ties & (rng.random(repeats) < p_win)))
        out[f"c{case}"] = [wins, int(np.sum(ties)), repeats - wins - int(np.sum(ties))]
    return out


def pairwise_rates(runs: int, cases: int, repeats: int, spread: float, shift: float) -> tuple[float, float]:
    rng = np.random.default_rng(23)
    verdict_level = case_level = 0
    for _ in range(runs):
        by_case = pairwise_run(rng, cases, repeats, spread, shift)
        wins = sum(w for w, _, _ in by_case.values())
        losses = sum(lo for _, _, lo in by_case.values())
        verdict_level += (binomial_two_sided(wins, wins + losses) or 1.0) < ALPHA
        p = case_preference(by_case).p_value
        case_level += p is not None and p < ALPHA
    return verdict_level / runs, case_level / runs


def early_exit_means(runs: int, cases: int, k: int, rates: np.ndarray) -> tuple[float, float]:
    """(mean of the attempts that ran, mean of the first attempts), averaged over simulated runs."""
    rng = np.random.default_rng(5)
    ran_means, first_means = [], []
    for _ in range(runs):
        passes = rng.random((cases, k)) < rates[:, None]
        first_pass = np.where(passes.any(axis=1), passes.argmax(axis=1), k - 1)
        attempts = first_pass + 1  # the attempts that ran: up to and including the first pass
        ran_means.append(float(np.mean(passes.any(axis=1) / attempts)))
        first_means.append(float(np.mean(passes[:, 0])))
    return float(np.mean(ran_means)), float(np.mean(first_means))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000, help="simulated runs per scenario")
    parser.add_argument("--quick", action="store_true", help="300 runs per scenario")
    args = parser.parse_args()
    runs = 300 if args.quick else args.runs
    print(f"pairwise: {runs} runs per scenario; share called significant at {ALPHA}")
    print(f"{'scenario':52}{'per verdict':>14}{'per case':>12}")
    for cases, repeats, spread, shift in SCENARIOS:
        start = time.perf_counter()
        verdict, case = pairwise_rates(runs, cases, repeats, spread, shift)
        kind = "A/A" if shift == 0 else f"candidate +{shift:.2f}"
        name = f"{kind}, {cases} cases x {repeats} repeats, case leans +-{spread:.2f}"
        print(f"{name:52}{verdict:>14.3f}{case:>12.3f}   ({time.perf_counter() - start:.0f} s)", flush=True)
    print(f"\nearly exit (pass_at_k, k = 3): {runs} runs of 200 cases; mean_score against the truth")
    for low, high in ((0.0, 0.4), (0.2, 0.2), (0.5, 0.9)):
        rates = np.linspace(low, high, 200)
        ran, first = early_exit_means(runs, 200, 3, rates)
        print(f"per-attempt pass rates {low:.1f}-{high:.1f} (true {rates.mean():.3f}): "
              f"attempts that ran {ran:.3f}, first attempt {first:.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
