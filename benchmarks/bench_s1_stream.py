"""S1 streamed beside S1 whole: `engine run` of 2,000 cases against the fake OpenAI server, once with
`stream = true` (server-sent events, one event per token: 4 tokens, the usage chunk and [DONE], as
chunked HTTP) and once reading whole answers, rounds interleaved so the machine's load hits both.

Prints the medians over `--rounds` fresh processes of each run's wall and CPU seconds, the per-trial
CPU of each ((CPU of the 2,000-trial run - CPU of a 1-trial run) / 1,999, start-up excluded) and what
streaming adds per trial (target: < 20%). The server runs in its own process (its CPU not counted).
A third run, "streamed, one write", reads the same events from a server that sends each streamed
answer in one write (as a buffering proxy does): the difference between the two streamed runs is what
the wake-ups per token cost, the rest is reading the events.

    python benchmarks/bench_s1_stream.py [--rounds 3] [--cases 2000] [--concurrency 64]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from bench_s1 import median_pair, run_once, write_experiment
from fake_server import start_server


def streamed(experiment: Path) -> Path:
    """The same experiment with stream = true on its target."""
    path = experiment.with_name("stream-" + experiment.name)
    path.write_text(
        experiment.read_text().replace("max_retries = 0\n", "max_retries = 0\nstream = true\n", 1)
    )
    return path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    server, base_url = start_server(0)
    joined_server, joined_url = start_server(0, joined_stream=True)
    try:
        with tempfile.TemporaryDirectory() as folder, tempfile.TemporaryDirectory() as other:
            big = write_experiment(Path(folder), base_url, args.cases, args.concurrency)
            one = write_experiment(Path(folder), base_url, 1, args.concurrency)
            joined = [write_experiment(Path(other), joined_url, n, args.concurrency) for n in (args.cases, 1)]
            runs = {
                "whole": (big, one), "streamed": (streamed(big), streamed(one)),
                "streamed, one write": (streamed(joined[0]), streamed(joined[1])),
            }  # fmt: skip
            run_once(runs["streamed"][1], env)  # bytecode caches written, files in the page cache
            load = os.getloadavg()
            samples: dict[str, tuple[list[tuple[float, float]], list[tuple[float, float]]]] = {
                name: ([], []) for name in runs
            }
            for _ in range(args.rounds):
                for name, (many, single) in runs.items():
                    samples[name][0].append(run_once(many, env))
                    samples[name][1].append(run_once(single, env))
            load_after = os.getloadavg()
    finally:
        for process in (server, joined_server):
            process.terminate()
            process.wait(timeout=10)
    print(f"load average {load[0]:.2f} before, {load_after[0]:.2f} after ({os.cpu_count()} CPUs); "
          f"medians of {args.rounds} rounds; CPU = the engine process's user + sys")  # fmt: skip
    per_trial = {}
    for name, (bigs, ones) in samples.items():
        (big_wall, big_cpu), (_, one_cpu) = median_pair(bigs), median_pair(ones)
        per_trial[name] = (big_cpu - one_cpu) / (args.cases - 1) * 1000
        print(f"S1 {name} ({args.cases} trials, concurrency {args.concurrency}): wall {big_wall:.2f} s, "
              f"CPU {big_cpu:.2f} s, per-trial CPU {per_trial[name]:.3f} ms; all rounds (wall/CPU s) "
              + ", ".join(f"{w:.2f}/{c:.2f}" for w, c in bigs))  # fmt: skip
    added = per_trial["streamed"] / per_trial["whole"] - 1
    print(f"streaming adds {added:+.0%} CPU per trial (target < +20%: {'met' if added < 0.2 else 'missed'})")
    joined_added = per_trial["streamed, one write"] / per_trial["whole"] - 1
    wakeups_us = (per_trial["streamed"] - per_trial["streamed, one write"]) * 1000
    print(f"the same events in one write add {joined_added:+.0%}: the wake-ups per token cost "
          f"{wakeups_us:.0f} us per trial")  # fmt: skip


if __name__ == "__main__":
    main()
