"""Append throughput of the event log, by group commit size.

Realistic trial events (TrialCompleted + TrialGraded with a grader result, as a run writes them) are
encoded with `events.codec.encode_many` and appended in groups of 1, 10, 100, 1000 and 5000 events,
one durable LMDB transaction per group (what `actors.writer` does). Encoding is inside the timing,
as it is in the writer; the pure encode rate is printed first for reference.

Target: >= 300k events/s for batched appends.

    .venv/bin/python benchmarks/bench_append.py [--quick] [--dir PATH]

Each group size runs until it has written `--events` events or spent `--seconds` (at least 3 groups),
so the fsync-bound small groups do not take minutes. `--dir` puts the log on another filesystem.
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
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.events import kinds as k  # noqa: E402
from engine.events.codec import encode_many  # noqa: E402
from engine.store.open import open_event_log  # noqa: E402

GROUPS = (1, 10, 100, 1000, 5000)
TARGET = 300_000


def trial_events(n: int, run_id: str, variants: int = 3, cases: int = 500) -> list[k.Event]:
    """n events: a completion and a grade per trial, cycling variants x cases x repeats."""
    out: list[k.Event] = []
    for i in range(n // 2):
        ident = {
            "run_id": run_id,
            "variant": f"variant-{i % variants}",
            "case": f"case-{(i // variants) % cases:05d}",
            "repeat": i // (variants * cases),
        }
        ts = 1_700_000_000.0 + i * 0.001
        out.append(
            k.TrialCompleted(
                **ident,
                ts=ts,
                output_hash=f"{i:064x}",
                latency_ms=120.5 + i % 97,
                tokens_in=41 + i % 13,
                tokens_out=17 + i % 29,
                cost_usd=0.00012,
            )
        )
        grade = k.GraderResult(name="contains", score=float(i % 2), passed=bool(i % 2))
        out.append(
            k.TrialGraded(**ident, ts=ts + 0.0005, score=float(i % 2), passed=bool(i % 2), grades=[grade])
        )
    return out


def encode_group(events: list[k.Event]) -> list[tuple[str, str, bytes]]:
    tags = k.TAG_BY_TYPE
    return [(e.run_id, tags[type(e)], data) for e, data in zip(events, encode_many(events), strict=True)]


class Result(NamedTuple):
    group: int
    events: int
    wall: float  # seconds
    cpu: float  # seconds of this process's CPU (user + system) over the same span

    @property
    def rate(self) -> float:
        return self.events / self.wall

    @property
    def commits(self) -> int:
        return self.events // self.group


def bench_group(events: list[k.Event], total: int, group: int, seconds: float, parent: str | None) -> Result:
    with tempfile.TemporaryDirectory(dir=parent) as path, open_event_log(path) as log:
        log.append(encode_group(events[total : total + group]))  # warm up: map the file, create the dbs
        done, wall, cpu = 0, time.perf_counter(), time.process_time()
        while done + group <= total:
            log.append(encode_group(events[done : done + group]))
            done += group
            if done >= 3 * group and time.perf_counter() - wall >= seconds:
                break
        result = Result(group, done, time.perf_counter() - wall, time.process_time() - cpu)
        assert log.last_seq() == done + group
    return result


def profile_group(events: list[k.Event], group: int, parent: str | None) -> None:
    """Where the time of a big group goes: the top functions by own time."""
    with tempfile.TemporaryDirectory(dir=parent) as path, open_event_log(path) as log:
        profiler = cProfile.Profile()
        profiler.enable()
        for start in range(0, min(len(events), 40 * group), group):
            log.append(encode_group(events[start : start + group]))
        profiler.disable()
    stats = pstats.Stats(profiler, stream=sys.stdout)
    stats.sort_stats("tottime").print_stats(8)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="100k events, ~1 s per group size")
    parser.add_argument("--events", type=int, help="events per group size (default 1M, 100k with --quick)")
    parser.add_argument(
        "--seconds", type=float, help="time budget per group size (default 5, 1 with --quick)"
    )
    parser.add_argument("--dir", help="directory for the temporary logs (default: the system temp dir)")
    parser.add_argument("--profile", action="store_true", help="also cProfile groups of 5000")
    args = parser.parse_args()
    total = args.events or (100_000 if args.quick else 1_000_000)
    seconds = args.seconds or (1.0 if args.quick else 5.0)

    events = trial_events(total + max(GROUPS), "bench")
    gc.freeze()  # the pre-built events are scaffolding: keep the collector from rescanning them
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")

    started = time.perf_counter()
    for start in range(0, total, 5000):
        encode_group(events[start : start + 5000])
    print(f"encode only (encode_many + tags): {total / (time.perf_counter() - started):>10,.0f} events/s")

    print("append: encode + one durable transaction per group")
    results = []
    for group in GROUPS:
        r = bench_group(events, total, group, seconds, args.dir)
        results.append(r)
        print(
            f"  group {group:>5}: {r.rate:>10,.0f} events/s  ({r.events:>9,} events; per commit"
            f" {r.wall / r.commits * 1000:6.2f} ms wall, {r.cpu / r.commits * 1000:6.2f} ms CPU;"
            f" CPU-bound ceiling {r.events / r.cpu:>9,.0f} events/s)"
        )
    best = max(r.rate for r in results if r.group >= 100)
    verdict = "met" if best >= TARGET else "MISSED"
    print(f"target >= {TARGET:,} events/s batched: {verdict} (best {best:,.0f})")
    # the wall time of a commit that is not CPU is waiting for the disk (LMDB syncs data, then meta)
    single, biggest = results[0], results[-1]
    sync_ms = (single.wall - single.cpu) / single.commits * 1000
    wait_ms = (biggest.wall - biggest.cpu) / biggest.commits * 1000
    cpu_ms = biggest.cpu / biggest.commits * 1000
    print(
        f"where the time goes: a durable commit waits ~{sync_ms:.1f} ms for the disk (group 1);"
        f" a group of {biggest.group}: {cpu_ms:.1f} ms CPU + {wait_ms:.1f} ms waiting"
    )
    if args.profile:
        profile_group(events, max(GROUPS), args.dir)


if __name__ == "__main__":
    main()
