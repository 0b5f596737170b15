"""Racing against the full design, on simulated suites (the race's own decision code, stats.racing).

Each simulated suite: `cases` cases whose difficulty is drawn from a Beta(2, 2); variant v passes case c
with probability logistic(logit(difficulty_c) + effect_v). One variant is best by `margin` (logits) over
the next; the rest are spread evenly below that, down to 2 logits under the best. The race runs
[stopping] rule = "race" with `rounds` rounds at alpha 0.05 on the pass rate; the full design runs
every variant on every case and picks the highest pass rate (significant when the winner beats each
other variant, Holm-corrected, at alpha).

Reported per number of variants: how often each design picks the true best, how often it declares a
significant winner, and the race's trials as a share of the full design's. With every variant equal
(A/A), the rate at which either declares any one significantly best, and the rate at which the race
drops any variant at all ("dropped": the family-wise rate `protect = "any"` bounds). `--easy`: the
best passes each case with probability 0.85, every other variant 0.45 (a clear field).

    python benchmarks/sim_race.py [--runs N] [--quick] [--protect best|any] [--easy] [--cases N]
"""

from __future__ import annotations

import argparse
import math
import os
import time
from fractions import Fraction

import numpy as np

from engine.stats import inference as stats
from engine.stats.racing import decide_round, race_threshold
from engine.stats.signflip import sign_flip_test

ALPHA = 0.05


def suite(
    rng: np.random.Generator, variants: int, cases: int, repeats: int, margin: float, easy: bool = False
) -> np.ndarray:
    """passes[v, c]: passing repeats of variant v on case c; variant 0 is the best (when margin > 0)."""
    if easy:
        p = np.full((variants, cases), 0.45 if margin > 0 else 0.85)
        p[0] = 0.85
        return rng.binomial(repeats, p)
    difficulty = rng.beta(2, 2, size=cases)
    logit = np.log(difficulty / (1 - difficulty))
    if margin > 0:
        effects = np.concatenate([[0.0], -margin - np.linspace(0, 2.0 - margin, variants - 1)])
    else:
        effects = np.zeros(variants)
    p = 1 / (1 + np.exp(-(logit[None, :] + effects[:, None])))
    return rng.binomial(repeats, p)


def per_case(passes: np.ndarray, variant: int, cases: range | list[int], repeats: int) -> dict[str, Fraction]:
    return {str(c): Fraction(int(passes[variant, c]), repeats) for c in cases}


def race(passes: np.ndarray, repeats: int, rounds: int, protect: str) -> tuple[int, bool, int, bool]:
    """(picked variant, declared significant, trials run, dropped any variant)."""
    variants, cases = passes.shape
    survivors = [str(v) for v in range(variants)]
    sizes = [math.ceil(cases * r / rounds) for r in range(1, rounds + 1)]
    threshold = race_threshold(ALPHA, rounds, variants, protect, sizes)
    trials, done = 0, 0
    leader, stop = survivors[0], ""
    for round_no in range(1, rounds + 1):
        count = math.ceil(cases * round_no / rounds)
        trials += len(survivors) * (count - done) * repeats
        done = count
        values = {v: per_case(passes, int(v), range(count), repeats) for v in survivors}
        outcome = decide_round(values, survivors, threshold, 0.0)
        dropped = {d.variant for d in outcome.drops}
        survivors = [v for v in survivors if v not in dropped]
        leader = outcome.leader
        if len(survivors) == 1:
            stop = "one_left"
            break
    return int(leader), stop == "one_left", trials, len(survivors) < variants


def full(passes: np.ndarray, repeats: int) -> tuple[int, bool, int]:
    variants, cases = passes.shape
    winner = int(np.argmax(passes.sum(axis=1)))
    best = per_case(passes, winner, range(cases), repeats)
    p_values = []
    for other in range(variants):
        if other == winner:
            continue
        rival = per_case(passes, other, range(cases), repeats)
        p_values.append(sign_flip_test([best[c] - rival[c] for c in best]).p_value)
    adjusted = stats.holm(p_values)
    significant = all(p is not None and p < ALPHA for p in adjusted)
    return winner, significant, variants * cases * repeats


def scenario(
    runs: int, variants: int, margin: float, cases: int, repeats: int, rounds: int, protect: str, easy: bool
) -> dict[str, float]:
    rng = np.random.default_rng(1000 + variants + int(margin * 100))
    tally = dict(race_best=0, race_sig=0, full_best=0, full_sig=0, race_trials=0, full_trials=0, dropped=0)
    for _ in range(runs):
        passes = suite(rng, variants, cases, repeats, margin, easy)
        picked, sig, trials, dropped = race(passes, repeats, rounds, protect)
        tally["dropped"] += dropped
        tally["race_best"] += picked == 0
        tally["race_sig"] += sig
        tally["race_trials"] += trials
        picked, sig, trials = full(passes, repeats)
        tally["full_best"] += picked == 0
        tally["full_sig"] += sig
        tally["full_trials"] += trials
    return {key: value / runs for key, value in tally.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--quick", action="store_true", help="100 runs, 8 and 16 variants")
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3, help="engine's default repeat.count")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--margin", type=float, default=0.5, help="the best's lead in logits")
    parser.add_argument("--protect", choices=["best", "any"], default="best", help="what alpha bounds")
    parser.add_argument("--easy", action="store_true", help="best 0.85, the others 0.45 on every case")
    parser.add_argument("--sizes", default="", help="numbers of variants, comma-separated")
    args = parser.parse_args()
    runs = 100 if args.quick else args.runs
    sizes = [8, 16] if args.quick else [8, 16, 32]
    if args.sizes:
        sizes = [int(n) for n in args.sizes.split(",")]
    print(f"load average {os.getloadavg()[0]:.1f}; {runs} runs each; {args.cases} cases x {args.repeats} "
          f"repeat(s), {args.rounds} rounds, alpha {ALPHA}, protect {args.protect}, "
          + ("best 0.85, others 0.45" if args.easy else f"best leads by {args.margin} logits"))  # fmt: skip
    print(f"{'variants':>8} {'scenario':>8} {'race best':>10} {'full best':>10} {'race sig':>9} "
          f"{'full sig':>9} {'race trials':>12} {'dropped':>8}")  # fmt: skip
    started = time.perf_counter()
    for variants in sizes:
        for name, margin in (("best", args.margin), ("A/A", 0.0)):
            design = (args.cases, args.repeats, args.rounds, args.protect, args.easy)
            r = scenario(runs, variants, margin, *design)
            share = r["race_trials"] / r["full_trials"]
            best = f"{r['race_best']:>10.1%} {r['full_best']:>10.1%}" if margin else f"{'-':>10} {'-':>10}"
            print(
                f"{variants:>8} {name:>8} {best} {r['race_sig']:>9.1%} {r['full_sig']:>9.1%} {share:>12.1%}"
                f" {r['dropped']:>8.1%}"
            )
    print(f"({time.perf_counter() - started:.0f} s; 'sig': declared one variant significantly best)")


if __name__ == "__main__":
    main()
