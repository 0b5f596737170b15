"""`engine compare --gate` end to end: how often each rule, and the whole gate, fires, simulated.

sim_gates.py measures the gates' statistics alone; here each simulated pair is two runs folded
from real events (tests/gate_runs.py) and compared by `compare_states`, the function `engine
compare` calls, so the figures include the paired pass-rate/score test, Holm and Bonferroni
across variants and the per-case rule together. The subject is simulated: latency ~
lognormal around 150 ms, cost ~ gamma around $0.002 a trial, each case with its own pass
probability (heterogeneous suite). A/A pairs draw both runs from the same distributions; the
old rules (a bare +20% on p95 latency / total cost) are evaluated on the same pairs.

Whole-run shifts: on a loaded machine every trial of a run is slower. "load 0-15%" slows each run
of a pair (and each earlier run, where the experiment has history) by its own factor drawn from
1.00-1.15; "latency unwidened" is the latency rule without its run-to-run margin (the interval
against 1 + threshold as it was), "latency new" the rule with it (the default 15% margin, or the
margin from the earlier runs' spread when there are at least 3). A steady agent (log sd 0.1
instead of 0.5) at a 2% threshold is where trial noise no longer hides the load.

    .venv/bin/python benchmarks/sim_compare.py [--pairs N] [--quick]   # ~10 min at 1000 pairs
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

from engine.events.spec import GateSpec  # noqa: E402
from engine.store.projections.report_builder import build_report  # noqa: E402
from engine.store.projections.run_state import RunState  # noqa: E402
from engine.views.compare.comparison import RunComparison, compare_states  # noqa: E402
from tests.gate_runs import simulated_run  # noqa: E402

CASES, REPEATS = 8, 10
TIGHT = GateSpec(max_p95_latency_increase=0.02)
CASE_PASS = np.linspace(0.15, 0.95, CASES)  # heterogeneous: every case has its own pass rate


class Shift(NamedTuple):
    latency: float = 1.0
    cost: float = 1.0
    broken_case: int | None = None  # this case never passes in the candidate
    spread: float = 0.5  # log sd of a trial's latency


class Scenario(NamedTuple):
    name: str
    variants: int
    shift: Shift
    load: float = 0.0  # each run slowed by its own factor in 1 .. 1 + load
    gate: GateSpec | None = None
    history: int = 0  # earlier runs of the experiment, for the run-to-run margin
    repeats: int = 10


def simulated(run_id: str, seed: int, variants: int, shift: Shift, repeats: int = REPEATS) -> RunState:
    rng = np.random.default_rng(seed)
    pass_p = CASE_PASS.copy()
    if shift.broken_case is not None:
        pass_p[shift.broken_case] = 0.0

    def trial(variant: str, case: str, repeat: int) -> tuple[float, float, bool]:
        latency, cost = rng.lognormal(np.log(150), shift.spread), rng.gamma(4, 0.0005)
        passed = bool(rng.random() < pass_p[int(case[1:])])
        return float(latency) * shift.latency, float(cost) * shift.cost, passed

    names = [f"v{i}" for i in range(variants)]
    return simulated_run(run_id, names, CASES, repeats, trial, seed=seed % 2**31)


def fired(result: RunComparison) -> Counter[str]:
    """Which rules fired anywhere in this comparison (any variant)."""
    hits: Counter[str] = Counter()
    for m in result.metrics:
        old = m.delta is not None and m.baseline is not None and m.candidate is not None
        old = old and m.candidate > m.baseline * (1 + m.threshold)
        if m.metric == "p95_latency_ms":
            hits["latency old"] |= bool(old and m.delta is not None and m.delta > 10)
            hits["latency new"] |= m.regressed
            unwidened = m.ratio_ci is not None and m.ratio_ci[0] > 1 + m.threshold
            hits["latency unwidened"] |= bool(unwidened and m.delta is not None and m.delta > 10)
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
    loads = np.random.default_rng(99)
    steady = Shift(spread=scenario.shift.spread)
    for i in range(pairs):
        factor = loads.uniform(1.0, 1.0 + scenario.load, 2 + scenario.history)
        base_shift = steady._replace(latency=factor[0])
        base = simulated("base", 2 * i, scenario.variants, base_shift, scenario.repeats)
        shift = scenario.shift._replace(latency=scenario.shift.latency * factor[1])
        cand = simulated("cand", 2 * i + 1, scenario.variants, shift, scenario.repeats)
        history = earlier(i, scenario, factor[2:])
        totals.update(fired(compare_states(base, cand, scenario.gate, history=history)))
    return totals


def earlier(pair: int, scenario: Scenario, factors: np.ndarray) -> dict[str, list[tuple[float, float]]]:
    """The experiment's earlier runs, as `engine compare` reads them: (p95 ms, cost per trial)."""
    found: dict[str, list[tuple[float, float]]] = {}
    for j, factor in enumerate(factors):
        seed = 10_000_000 + pair * 100 + j
        shift = Shift(spread=scenario.shift.spread, latency=factor)
        run = simulated(f"early{j}", seed, scenario.variants, shift, scenario.repeats)
        for v in build_report(run).variants:
            if v.latency_ms.p95 is not None and v.trials:
                found.setdefault(v.name, []).append((v.latency_ms.p95, v.cost_usd / v.trials))
    return found


SCENARIOS = [
    Scenario("A/A, 1 variant", 1, Shift()),
    Scenario("A/A, 3 variants", 3, Shift()),
    Scenario("latency +28% (machine load)", 1, Shift(latency=1.28)),
    Scenario("latency +60%", 1, Shift(latency=1.6)),
    Scenario("cost +60%", 1, Shift(cost=1.6)),
    Scenario("one case broken (c07: 95% -> 0%)", 1, Shift(broken_case=CASES - 1)),
    Scenario("A/A, load 0-15%", 1, Shift(), load=0.15),
    Scenario("A/A, load 0-15%, 3 variants", 3, Shift(), load=0.15),
    Scenario("A/A, load 0-15%, steady, 2%", 1, Shift(spread=0.1), load=0.15, gate=TIGHT, repeats=50),
    Scenario("same, 5 earlier runs", 1, Shift(spread=0.1), load=0.15, gate=TIGHT, history=5, repeats=50),
    Scenario("latency +60%, load 0-15%", 1, Shift(latency=1.6), load=0.15),
    Scenario("latency +60%, load, 400 trials", 1, Shift(latency=1.6), load=0.15, repeats=50),
    Scenario("latency +60%, load, 5 earlier", 1, Shift(latency=1.6), load=0.15, history=5),
    Scenario("latency +30%, steady, 5 earlier", 1, Shift(latency=1.3, spread=0.1), load=0.15, history=5),
    Scenario("A/A, load, 3 earlier", 1, Shift(), load=0.15, history=3),
    Scenario("A/A, load, 3 earlier, 3 variants", 3, Shift(), load=0.15, history=3),
    Scenario("latency 2x, load, 3 earlier", 1, Shift(latency=2.0), load=0.15, history=3),
    Scenario("latency 2x, load, 5 earlier", 1, Shift(latency=2.0), load=0.15, history=5),
]
COLUMNS = ["latency old", "latency unwidened", "latency new", "cost old", "cost new", "per-case new"]
COLUMNS += ["pass/score paired"]
COLUMNS += ["gate old", "whole gate"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=1000, help="simulated pairs per scenario")
    parser.add_argument("--quick", action="store_true", help="200 pairs per scenario")
    parser.add_argument("--only", default="", help="only the scenarios whose name holds this text")
    args = parser.parse_args()
    pairs = 200 if args.quick else args.pairs
    print(f"{pairs} pairs per scenario; {CASES} cases x {REPEATS} repeats per variant; rate rules fired")
    print(f"{'scenario':34}" + "".join(f"{c:>18}" for c in COLUMNS))
    for scenario in [s for s in SCENARIOS if args.only in s.name]:
        start = time.perf_counter()
        totals = simulate(scenario, pairs)
        rates = "".join(f"{totals[c] / pairs:>18.3f}" for c in COLUMNS)
        print(f"{scenario.name:34}{rates}   ({time.perf_counter() - start:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
