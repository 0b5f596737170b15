"""Peak RSS of a whole run at 1k / 10k / 100k trials (each in a fresh process), with an instant target.

RSS must not grow with the number of completed trials: the run state is kept
per cell (variant x case), outputs go to the blob store, channels are bounded.

    python benchmarks/bench_rss.py [--quick]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time

CHILD = r"""
import resource, sys, time, trio
from engine.api import open_engine, spec_from_dict

def answer(request):
    return "yes" if request.seed % 3 else "no"

async def instant(request):
    return answer(request)

trials, cases = int(sys.argv[1]), int(sys.argv[2])
repeats = trials // (2 * cases)
spec = spec_from_dict({
    "name": "rss", "target": {"kind": "python", "callable": "instant"},
    "variants": [{"name": "a"}, {"name": "b", "params": {"t": 1}}],
    "cases": [{"id": f"c{i}", "prompt": "p", "expected": "yes"} for i in range(cases)],
    "repeat": {"count": repeats}, "execution": {"concurrency": 64},
})

async def main():
    async with open_engine(sys.argv[3], callables={"instant": instant}) as eng:
        start = time.perf_counter()
        report = await eng.run(spec)
        elapsed = time.perf_counter() - start
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"{report.trials_done} {elapsed:.2f} {peak_kib}")

trio.run(main)
"""


def measure(trials: int, cases: int) -> tuple[int, float, int]:
    with tempfile.TemporaryDirectory() as store:
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(trials), str(cases), store],
            capture_output=True,
            text=True,
            check=True,
        )
    done, elapsed, peak = out.stdout.split()
    return int(done), float(elapsed), int(peak)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="1k and 10k trials only")
    args = parser.parse_args()
    sizes = [1_000, 10_000] if args.quick else [1_000, 10_000, 100_000]
    print(f"{'trials':>8} {'seconds':>8} {'trials/s':>9} {'peak RSS MiB':>13}")
    started = time.perf_counter()
    for trials in sizes:
        done, elapsed, peak_kib = measure(trials, cases=100)
        print(f"{done:>8} {elapsed:>8.2f} {done / elapsed:>9.0f} {peak_kib / 1024:>13.1f}")
    print(f"(total {time.perf_counter() - started:.0f} s; python callable target, 2 variants x 100 cases)")


if __name__ == "__main__":
    main()
