"""Racing a tuning session's candidates against running each on every case: real sessions (the
engine's own runtime, an in-memory store) on a simulated subject.

Each session tunes temperature (0-1, step 0.1, from 0.7) on `cases` cases x 2 repeats. The subject
passes case c at temperature t with probability logistic(logit(d_c) + 3 - 8 |t - peak|): the case's
difficulty d_c ~ Beta(2, 2), the peak drawn uniformly from the grid. The same session runs twice, on
the same trial outcomes: once plain, once with [stopping] rule = "race" (`rounds` rounds, alpha 0.05).

Reported: the raced sessions' trials as a share of the plain ones', how often each ends on the peak
(or a grid point next to it), and how often the raced session makes exactly the plain one's decisions.

    python benchmarks/sim_tune_race.py [--runs N] [--cases N] [--rounds N] [--quick]
"""

from __future__ import annotations

import argparse
import math
import time
from typing import Any

import numpy as np
import trio

from engine.actors.targets.target_protocol import TargetRequest
from engine.api import open_engine, spec_from_dict
from engine.store.memory import MemoryStore


def subject(difficulty: dict[str, float], peak: float) -> Any:
    async def answer(request: TargetRequest) -> str:
        t = float(request.params.get("temperature", 0.7))
        d = difficulty[request.case.id]
        chance = 1 / (1 + math.exp(-(math.log(d / (1 - d)) + 3 - 8 * abs(t - peak))))
        return "yes" if (request.seed % 10_000) / 10_000 < chance else "no"

    return answer


def spec(seed: int, cases: int, rounds: int, race: bool) -> Any:
    return spec_from_dict({
        "name": "sim-tune-race", "kind": "tune", "seed": seed,
        "target": {"kind": "python", "callable": "subject"},
        "params": {"temperature": 0.7},
        "cases": [{"id": f"c{i}", "prompt": "p", "expected": "yes"} for i in range(cases)],
        "repeat": {"count": 2},
        "tune": {"strategy": "grid", "max_experiments": 10, "min_improvement": 0.05, "parameters": [
            {"name": "temperature", "min": 0.0, "max": 1.0, "step": 0.1, "default": 0.7}]},
        **({"stopping": {"rule": "race", "rounds": rounds}} if race else {}),
    })  # fmt: skip


async def session(
    seed: int, cases: int, rounds: int, race: bool, target: Any
) -> tuple[int, float, list[Any]]:
    """(trials, the temperature it ended on, its decisions)."""
    async with open_engine(MemoryStore(), callables={"subject": target}) as eng:
        report = await eng.run(spec(seed, cases, rounds, race))
    accepted = [v for v in report.variations if v.accepted]
    end = float(accepted[-1].value) if accepted else 0.7  # type: ignore[arg-type]
    return report.trials_done, end, [(v.value, v.accepted) for v in report.variations]


async def main(runs: int, cases: int, rounds: int) -> None:
    rng = np.random.default_rng(7)
    ratios, same, near = [], 0, {"plain": 0, "raced": 0}
    started = time.perf_counter()
    for run in range(runs):
        difficulty = {f"c{i}": float(d) for i, d in enumerate(rng.beta(2, 2, size=cases).clip(0.01, 0.99))}
        peak = round(float(rng.integers(0, 11)) / 10, 1)
        target = subject(difficulty, peak)
        plain = await session(run + 1, cases, rounds, False, target)
        raced = await session(run + 1, cases, rounds, True, target)
        ratios.append(raced[0] / plain[0])
        same += plain[2] == raced[2]
        for name, result in (("plain", plain), ("raced", raced)):
            near[name] += abs(result[1] - peak) <= 0.1 + 1e-9
    took = time.perf_counter() - started
    print(f"{runs} sessions, {cases} cases x 2 repeats, {rounds} rounds ({took:.0f} s)")
    print(f"raced trials / plain trials: mean {np.mean(ratios):.1%}, "
          f"range {min(ratios):.1%}-{max(ratios):.1%}")  # fmt: skip
    print(f"ended on the peak or next to it: plain {near['plain'] / runs:.0%}, "
          f"raced {near['raced'] / runs:.0%}")  # fmt: skip
    print(f"raced session made exactly the plain session's decisions: {same / runs:.0%}")


if __name__ == "__main__":
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--cases", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--quick", action="store_true", help="8 sessions")
    args = parser.parse_args()
    trio.run(main, 8 if args.quick else args.runs, args.cases, args.rounds)
