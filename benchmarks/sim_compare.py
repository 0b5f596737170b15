"""`engine compare --gate` end to end: how often each rule, and the whole gate, fires, simulated.

sim_gates.py measures the gates' statistics alone; here each simulated pair is two runs folded
from real events (tests/gate_runs.py) and compared by `compare_states`, the function `engine
compare` calls, so the figures include the paired pass-rate/score test, Holm and Bonferroni
across variants and the per-case rule together. The subject is simulated: latency ~
lognormal around 150 ms, cost ~ gamma around $0.002 a trial, each case with its own pass
probability (heterogeneous suite). A/A pairs draw both runs from the same distributions; the
old rules (a bare +20% on p95 latency / total cost) are evaluated on the same pairs.

    .venv/bin/python benchmarks/sim_compare.py [--pairs N] [--quick]   # ~1 min at 1000 pairs
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path
from typing import NamedTuple

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.store.projections.run_state import RunState  # noqa: E402
from engine.views.compare import RunComparison, compare_states  # noqa: E402
from tests.gate_runs import simulated_run  # noqa: E402

CASES, REPEATS = 8, 10
CASE_PASS = np.linspace(0.15, 0.95, CASES)  # heterogeneous: every case has its own pass rate


class Shift(NamedTuple):
    latency: float = 1.0
    cost: float = 1.0
    broken_case: int | None = None  # this case never passes in the candidate


class Scenario(NamedTuple):
    name: str
    variants: int
    shift: Shift


def simulated(run_id: str, seed: int, variants: int, shift: Shift) -> RunState:
    rng = np.random.default_rng(seed)
    pass_p = CASE_PASS.copy()
    if shift.broken_case is not None:
        pass_p[shift.broken_case] = 0.0

    def trial(variant: str, case: str, repeat: int) -> tuple[float, float, bool]:
        latency, cost = rng.lognormal(np.log(150), 0.5), rng.gamma(4, 0.0005)
        passed = bool(rng.random() < pass_p[int(case[1:])])
        return float(latency) * shift.latency, float(cost) * shift.cost, passed

    names = [f"v{i}" for i in range(variants)]
    return simulated_run(run_id, names, CASES, REPEATS, trial, seed=seed % 2**31)


def fired(result: RunComparison) -> Counter[str]:
    """Which rules fired anywhere in this comparison (any variant)."""
    hits: Counter[str] = Counter()
    for m in result.metrics:
        old = m.delta is not None and m.baseline is not None and m.candidate is not None
        old = old and m.candidate > m.baseline * (1 + m.threshold)
        if m.metric == "p95_latency_ms":
            hits["latency old"] |= bool(old and m.delta is not None and m.delta > 10)
            hits["latency new"] |= m.regressed
        elif m.metric == "cost_usd":
            hits["cost old"] |= bool(old and m.delta is not None and m.delta > 0.001)
            hits["cost new"] |= m.regressed
        else:
            hits["pass/score paired"] |= m.regressed
            raw = m.p_value is None or m.p_value < 0.05  # before Holm over variants
            hits["gate old"] |= bool(m.delta is not None and m.delta < -m.threshold and raw)
    hits["gate old"] |= hits["latency old"] or hits["cost old"]
    hits["per-case new"] |= bool(result.newly_failing)
    hits["whole gate"] |= result.regressed
    return hits


def simulate(scenario: Scenario, pairs: int) -> Counter[str]:
    totals: Counter[str] = Counter()
    for i in range(pairs):
        base = simulated("base", 2 * i, scenario.variants, Shift())
        cand = simulated("cand", 2 * i + 1, scenario.variants, scenario.shift)
        totals.update(fired(compare_states(base, cand)))
    return totals


SCENARIOS = [
    Scenario("A/A, 1 variant", 1, Shift()),
    Scenario("A/A, 3 variants", 3, Shift()),
    Scenario("latency +28% (machine load)", 1, Shift(latency=1.28)),
    Scenario("latency +60%", 1, Shift(latency=1.6)),
    Scenario("cost +60%", 1, Shift(cost=1.6)),
    Scenario("one case broken (c07: 95% -> 0%)", 1, Shift(broken_case=CASES - 1)),
]
COLUMNS = ["latency old", "latency new", "cost old", "cost new", "per-case new", "pass/score paired"]
COLUMNS += ["gate old", "whole gate"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=1000, help="simulated pairs per scenario")
    parser.add_argument("--quick", action="store_true", help="200 pairs per scenario")
    args = parser.parse_args()
    pairs = 200 if args.quick else args.pairs
    print(f"{pairs} pairs per scenario; {CASES} cases x {REPEATS} repeats per variant; rate rules fired")
    print(f"{'scenario':32}" + "".join(f"{c:>18}" for c in COLUMNS))
    for scenario in SCENARIOS:
        start = time.perf_counter()
        totals = simulate(scenario, pairs)
        rates = "".join(f"{totals[c] / pairs:>18.3f}" for c in COLUMNS)
        print(f"{scenario.name:32}{rates}   ({time.perf_counter() - start:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
