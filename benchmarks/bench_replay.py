"""Replay throughput: scan the log + decode every event + a trivial fold (count by type).

Writes 1M realistic trial events (100k with --quick) for a few runs in group commits of 5000, then
times the replay path `engine replay` uses: `EventLog.read` -> `events.codec.decode` ->
`store.projection.fold`. The parts are then timed alone (scan only, decode only, fold only) so a
miss shows where the time goes; `--profile` adds a cProfile of the whole replay.

Target: >= 500k events/s.

    .venv/bin/python benchmarks/bench_replay.py [--quick] [--events N] [--runs R] [--profile] [--dir PATH]
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import os
import pstats
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_append import encode_group, trial_events  # noqa: E402

from engine.events import codec  # noqa: E402
from engine.events import kinds as k  # noqa: E402
from engine.events.codec import decode  # noqa: E402
from engine.store.log.event_log import EventLog  # noqa: E402
from engine.store.open import open_event_log  # noqa: E402
from engine.store.projection import fold  # noqa: E402

TARGET = 500_000
REPEATS = 3
T = TypeVar("T")


def count_by_type(state: dict[type, int], event: k.Event) -> dict[type, int]:
    state[type(event)] = state.get(type(event), 0) + 1
    return state


def replay(log: EventLog) -> dict[type, int]:
    return fold(count_by_type, {}, (decode(data) for _, data in log.read()))


def best_of(work: Callable[[], T]) -> tuple[float, float, T]:
    """Wall and CPU seconds of the fastest of a few runs (the first warms the page cache), and its result."""
    best = (float("inf"), float("inf"))
    for _ in range(REPEATS):
        wall, cpu = time.perf_counter(), time.process_time()
        result = work()
        best = min(best, (time.perf_counter() - wall, time.process_time() - cpu))
    return best[0], best[1], result


def parts(log: EventLog, sample: int = 100_000) -> dict[str, float]:
    """CPU seconds per event of each step of the replay alone (decode streams, as the replay does)."""
    _, scan, raw = best_of(lambda: [data for _, data in log.read()])
    msgspec_decode = codec._decoder.decode  # the codec's tagged-union decoder, without its version check
    _, plain, _ = best_of(lambda: deque(map(msgspec_decode, raw), maxlen=0))
    _, full, _ = best_of(lambda: deque(map(decode, raw), maxlen=0))
    decoded = [decode(data) for data in raw[:sample]]
    _, folded, _ = best_of(lambda: fold(count_by_type, {}, decoded))
    return {
        "scan (EventLog.read)": scan / len(raw),
        "decode: msgspec tagged union alone": plain / len(raw),
        "decode: events.codec.decode": full / len(raw),
        "fold (count by type)": folded / len(decoded),
    }


def fill(log: EventLog, total: int, runs: int) -> None:
    per_run = total // runs
    for run in range(runs):
        events = trial_events(per_run, f"run-{run}")
        for start in range(0, len(events), 5000):
            log.append(encode_group(events[start : start + 5000]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="100k events instead of 1M")
    parser.add_argument("--events", type=int, help="events to write and replay (default 1M)")
    parser.add_argument("--runs", type=int, default=4, help="runs the events are spread over")
    parser.add_argument("--profile", action="store_true", help="cProfile one replay")
    parser.add_argument("--dir", help="directory for the temporary log (default: the system temp dir)")
    args = parser.parse_args()
    total = args.events or (100_000 if args.quick else 1_000_000)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")

    with tempfile.TemporaryDirectory(dir=args.dir) as path, open_event_log(path) as log:
        started = time.perf_counter()
        fill(log, total, args.runs)
        count = log.last_seq()
        print(f"wrote {count:,} events in {args.runs} runs ({time.perf_counter() - started:.1f} s)")
        gc.collect()
        gc.freeze()

        elapsed, cpu, counts = best_of(lambda: replay(log))
        assert sum(counts.values()) == count
        rate = count / elapsed
        verdict = "met" if rate >= TARGET else "MISSED"
        print(
            f"replay (scan + decode + fold):  {rate:>10,.0f} events/s  ({elapsed:.2f} s wall,"
            f" best of {REPEATS}; {count / cpu:,.0f} events per CPU-second)"
        )
        print(f"  counts: {', '.join(f'{k.TAG_BY_TYPE[t]}={n:,}' for t, n in counts.items())}")
        print(f"target >= {TARGET:,} events/s: {verdict}")
        print("the parts alone (CPU time, so the figures hold on a busy machine):")
        for name, seconds in parts(log).items():
            print(f"  {name:<38} {1 / seconds:>12,.0f} events/s  {seconds * 1e6:6.2f} us/event")

        run_s, _, one_run = best_of(lambda: sum(1 for _ in log.read_run("run-1")))
        print(f"read one run by index (no decode): {one_run / run_s:>10,.0f} events/s ({one_run:,} events)")

        if args.profile:
            profiler = cProfile.Profile()
            profiler.enable()
            replay(log)
            profiler.disable()
            pstats.Stats(profiler, stream=sys.stdout).sort_stats("tottime").print_stats(8)


if __name__ == "__main__":
    main()
