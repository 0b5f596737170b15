"""`engine history` over many runs of one experiment: time to answer (target: 1,000 runs in < 1 s).

    python benchmarks/bench_history.py [--runs 1000] [--quick]

Builds a real LMDB store with RUNS small runs of one experiment (in-process, a python target), then
times the history projection (each run's summary and stored report) cold and warm.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import trio

from engine.actors.targets.target_protocol import TargetRequest
from engine.api import open_engine, spec_from_dict
from engine.store.open import open_event_log
from engine.views.history import history


def answer(request: TargetRequest) -> str:
    return "yes" if request.seed % 3 else "no"


SPEC = {
    "name": "history-bench",
    "target": {"kind": "python", "callable": "answer"},
    "cases": [{"id": f"c{i}", "prompt": "p", "expected": "yes"} for i in range(5)],
}


async def fill(store: Path, runs: int) -> None:
    async with open_engine(store, callables={"answer": answer}) as eng:
        for i in range(runs):
            await eng.run(spec_from_dict({**SPEC, "seed": i}), run_id=f"r{i:05d}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="100 runs")
    args = parser.parse_args()
    runs = 100 if args.quick else args.runs
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        started = time.perf_counter()
        trio.run(fill, store, runs)
        print(f"built {runs} runs in {time.perf_counter() - started:.1f} s")
        with open_event_log(store, readonly=True) as log:
            for label in ("cold", "warm"):
                started = time.perf_counter()
                points = history(log, "history-bench")
                elapsed = time.perf_counter() - started
                print(f"history over {len(points)} runs ({label}): {elapsed * 1000:.0f} ms")


if __name__ == "__main__":
    main()
