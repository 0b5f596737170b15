"""S1 as a person runs it: `engine run` on 2,000 cases against the fake OpenAI server, from the shell.

Prints, as medians over `--rounds` fresh processes (each on a new store):
- S1: wall seconds and the engine process's CPU seconds (user + sys) for 2,000 instant trials,
  start-up included, and trials/s;
- per-trial CPU: (CPU of the 2,000-trial run - CPU of a 1-trial run) / 1,999, start-up excluded;
- cold start: `engine --help`, and `engine run` of one trial (start-up, one trial, report, exit).

The server runs in its own process (its CPU is not counted). Python writes no bytecode cache when
PYTHONDONTWRITEBYTECODE is set, and then compiles engine's modules at every start: the script unsets
it, as an installed package has its cache. The load average is printed: on a shared machine compare
before/after in the same conditions.

    python benchmarks/bench_s1.py [--rounds 5] [--cases 2000] [--concurrency 64] [--latency-ms 0]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
from fake_server import start_server  # noqa: E402 - a sibling module: the benchmarks run as scripts

ENGINE = [sys.executable, "-m", "engine.cli.main"]




def write_experiment(folder: Path, base_url: str, cases: int, concurrency: int) -> Path:
    with (folder / f"cases{cases}.jsonl").open("w") as out:
        for i in range(cases):
            out.write(json.dumps({"id": f"c{i}", "prompt": f"question {i}", "expected": "answer"}) + "\n")
    path = folder / f"s1-{cases}.toml"
    path.write_text(
        f'name = "s1"\n[target]\nkind = "openai"\nbase_url = "{base_url}"\nmodel = "fake"\nmax_retries = 0\n'
        f'[execution]\nconcurrency = {concurrency}\n[[graders]]\nkind = "contains"\ncase_sensitive = false\n'
        f'[suite]\npath = "cases{cases}.jsonl"\n'
    )
    return path


def child_usage(
    args: list[str], env: dict[str, str], cwd: Path | None = None, ok: tuple[int, ...] = (0,)
) -> tuple[float, Any]:
    """Wall seconds and the resource usage (wait4's: the child's own) of one child process, which must
    exit with one of `ok`; its stderr goes to a file (a pipe nobody reads could fill and stall it)."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as errors:
        child = subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=errors)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode not in ok:
            errors.seek(0)
            raise RuntimeError(f"{' '.join(args)} exited {child.returncode}: {errors.read().decode()[-800:]}")
    return wall, usage


def timed(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + sys) of one child process; it must succeed."""
    wall, usage = child_usage(args, env)
    return wall, usage.ru_utime + usage.ru_stime


def run_once(experiment: Path, env: dict[str, str]) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as store:
        return timed([*ENGINE, "run", "-q", str(experiment), "--store", store], env)


def first_trial_s(experiment: Path, env: dict[str, str]) -> float:
    """Start-up as a person waits for it: from the process's launch to its first trial's start, as the
    run's own log dates it (`trial.started`, the wall clock, the same machine's)."""
    from engine.events import kinds as k
    from engine.events.codec import decode
    from engine.store.open import open_event_log

    with tempfile.TemporaryDirectory() as store:
        launched = time.time()
        timed([*ENGINE, "run", "-q", str(experiment), "--store", store], env)
        log = open_event_log(Path(store), readonly=True)
        try:
            started = (decode(data) for _, data in log.read())
            return next(e.ts for e in started if isinstance(e, k.TrialStarted)) - launched
        finally:
            log.close()


def median_pair(samples: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency-ms", type=int, default=0)
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    server, base_url = start_server(args.latency_ms)
    try:
        with tempfile.TemporaryDirectory() as folder:
            big = write_experiment(Path(folder), base_url, args.cases, args.concurrency)
            one = write_experiment(Path(folder), base_url, 1, args.concurrency)
            run_once(one, env)  # bytecode caches written, files in the page cache
            load = os.getloadavg()
            helps, ones, bigs, firsts = [], [], [], []
            for _ in range(args.rounds):  # interleaved: a change in the machine's load hits all four
                helps.append(timed([*ENGINE, "--help"], env))
                ones.append(run_once(one, env))
                firsts.append(first_trial_s(one, env))
                bigs.append(run_once(big, env))
            load_after = os.getloadavg()
    finally:
        server.terminate()
        server.wait(timeout=10)
    (help_wall, help_cpu), (one_wall, one_cpu), (big_wall, big_cpu) = map(median_pair, (helps, ones, bigs))
    per_trial_ms = (big_cpu - one_cpu) / (args.cases - 1) * 1000
    print(f"load average {load[0]:.2f} before, {load_after[0]:.2f} after ({os.cpu_count()} CPUs); "
          f"medians of {args.rounds} rounds; CPU = the engine process's user + sys")  # fmt: skip
    print(f"S1 ({args.cases} trials, concurrency {args.concurrency}, {args.latency_ms} ms server): "
          f"wall {big_wall:.2f} s, CPU {big_cpu:.2f} s, {args.cases / big_wall:.0f} trials/s")  # fmt: skip
    verdict = "met" if per_trial_ms < 0.3 else "missed"
    print(f"per-trial CPU (start-up excluded): {per_trial_ms:.3f} ms (target < 0.300 ms: {verdict})")
    print(f"cold start: engine --help wall {help_wall:.3f} s (CPU {help_cpu:.3f}); "
          f"engine run, 1 trial, wall {one_wall:.3f} s (CPU {one_cpu:.3f}); launch to the first trial's "
          f"start {statistics.median(firsts):.3f} s")  # fmt: skip
    print("all rounds (wall/CPU s): S1 " + ", ".join(f"{w:.2f}/{c:.2f}" for w, c in bigs)
          + "; 1 trial " + ", ".join(f"{w:.2f}/{c:.2f}" for w, c in ones))  # fmt: skip


if __name__ == "__main__":
    main()
