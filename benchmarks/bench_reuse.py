"""S1 re-run with everything reused: `engine run FILE --reuse` of 2,000 cases a first run already sent.

Prints, as medians over `--rounds` fresh processes (each on a copy of the store the first run filled):
the re-run's wall and CPU seconds (start-up, 2,000 reuses graded, report and exit included), and the
requests the fake server received during the re-runs (counted by the server, its own process).

    python benchmarks/bench_reuse.py [--rounds 5] [--cases 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import urllib.request
from pathlib import Path

from bench_s1 import ENGINE, timed, write_experiment
from fake_server import start_server


def received(base_url: str) -> int:
    root = base_url.removesuffix("/v1")
    with urllib.request.urlopen(f"{root}/stats") as answer:
        return int(json.load(answer)["received"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cases", type=int, default=2000)
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    server, base_url = start_server(0)
    try:
        with tempfile.TemporaryDirectory() as folder:
            experiment = write_experiment(Path(folder), base_url, args.cases, 64)
            filled = Path(folder) / "filled"
            timed([*ENGINE, "run", "-q", str(experiment), "--store", str(filled)], env)
            sent_first = received(base_url)
            load = os.getloadavg()
            samples = []
            for i in range(args.rounds):
                store = Path(folder) / f"round{i}"
                shutil.copytree(filled, store)
                samples.append(
                    timed([*ENGINE, "run", "-q", str(experiment), "--store", str(store), "--reuse"], env)
                )
            sent_again = received(base_url) - sent_first
            load_after = os.getloadavg()
    finally:
        server.terminate()
        server.wait(timeout=10)
    wall, cpu = statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples)
    verdict = "met" if wall < 0.5 and sent_again == 0 else "missed"
    print(f"load average {load[0]:.2f} before, {load_after[0]:.2f} after ({os.cpu_count()} CPUs)")
    print(f"first run sent {sent_first} requests; {args.rounds} re-runs with --reuse sent {sent_again}")
    print(f"S1 fully reused ({args.cases} trials): wall {wall:.3f} s, CPU {cpu:.3f} s, "
          f"medians of {args.rounds} (target < 0.5 s wall and 0 requests: {verdict})")  # fmt: skip
    print("all rounds (wall/CPU s): " + ", ".join(f"{w:.3f}/{c:.3f}" for w, c in samples))


if __name__ == "__main__":
    main()
