"""Trials per second against a local fake OpenAI-compatible server (real sockets, real HTTP).

The server runs in its own process so it does not share the engine's CPU time
slice; one engine process runs the experiment with the `openai` target (one
httpx client per executor worker). Peers measured on this machine with the same
kind of server: promptfoo ~105-160 trials/s, Inspect AI ~45-55 trials/s (measured on this machine).

    python benchmarks/bench_trials.py [--quick]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import trio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fake_server import start_server  # noqa: E402 - a sibling: benchmarks run as scripts

from engine.api import open_engine, spec_from_dict  # noqa: E402


def spec(base_url: str, cases: int, concurrency: int) -> object:
    return spec_from_dict(
        {
            "name": "bench",
            "target": {"kind": "openai", "base_url": base_url, "model": "fake", "max_retries": 0},
            "cases": [{"id": f"c{i}", "prompt": f"question {i}", "expected": "answer"} for i in range(cases)],
            "graders": [{"kind": "contains", "case_sensitive": False}],
            "execution": {"concurrency": concurrency, "judge_concurrency": 4},
        }
    )


async def measure(base_url: str, cases: int, concurrency: int) -> tuple[float, int, int]:
    with tempfile.TemporaryDirectory() as store:
        async with open_engine(store) as eng:
            started = time.perf_counter()
            report = await eng.run(spec(base_url, cases, concurrency))  # type: ignore[arg-type]
            elapsed = time.perf_counter() - started
    errors = sum(v.errors for v in report.variants)
    return elapsed, report.trials_done, errors


def main() -> None:
    # the report's statistics import numpy lazily (~0.15 s, once per process): pay it before timing
    import numpy  # noqa: F401

    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer cases, fewer settings")
    args = parser.parse_args()
    cases = 500 if args.quick else 2000
    settings = (
        [(0, 16), (0, 64)] if args.quick else [(0, 16), (0, 64), (0, 256), (50, 16), (50, 64), (50, 256)]
    )
    print(f"{'latency':>8} {'conc':>5} {'trials':>7} {'errors':>7} {'seconds':>8} {'trials/s':>9}")
    for latency_ms, concurrency in settings:
        server, base_url = start_server(latency_ms)
        try:
            elapsed, done, errors = trio.run(measure, base_url, cases, concurrency)
        finally:
            server.terminate()
            server.wait(timeout=10)
        print(
            f"{latency_ms:>6}ms {concurrency:>5} {done:>7} {errors:>7} {elapsed:>8.2f} {done / elapsed:>9.0f}"
        )


if __name__ == "__main__":
    main()
