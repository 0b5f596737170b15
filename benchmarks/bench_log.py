"""Event log throughput: batched durable appends, and replay (scan + decode + fold).

Targets (BRIEF.md, issue 2): >= 300k events/s appended in batches; replay >= 500k events/s.

    python benchmarks/bench_log.py [--quick]
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from events import kinds as k  # noqa: E402
from events.codec import decode, encode_many  # noqa: E402
from store.log import Append, EventLog  # noqa: E402


def trial_events(n: int, run_id: str) -> list[k.Event]:
    out: list[k.Event] = []
    for i in range(n // 2):
        ident = {"run_id": run_id, "variant": f"v{i % 3}", "case": f"case-{i % 500}", "repeat": i // 1500}
        out.append(
            k.TrialCompleted(**ident, ts=1.0 + i, output_hash="ab" * 32, latency_ms=12.5, tokens_in=40)
        )
        out.append(k.TrialGraded(**ident, ts=1.0 + i, score=1.0, passed=True))
    return out


def appends(events: list[k.Event]) -> list[Append]:
    return [
        (e.run_id, k.TAG_BY_TYPE[type(e)], data) for e, data in zip(events, encode_many(events), strict=True)
    ]


def bench_append(total: int) -> None:
    print("append (encode + one durable transaction per group)")
    events = trial_events(total, "bench")
    # the million pre-built events are test scaffolding: keep the collector from rescanning them
    gc.freeze()
    for group in (1, 10, 100, 1000, 5000):
        count = min(total, group * 2000) if group < 100 else total
        with tempfile.TemporaryDirectory() as path, EventLog(path) as log:
            started = time.perf_counter()
            for start in range(0, count, group):
                log.append(appends(events[start : start + group]))
            elapsed = time.perf_counter() - started
        print(f"  group {group:>5}: {count / elapsed:>10,.0f} events/s ({count} events)")


def bench_replay(total: int) -> None:
    with tempfile.TemporaryDirectory() as path, EventLog(path) as log:
        for run in range(4):
            events = trial_events(total // 4, f"run-{run}")
            for start in range(0, len(events), 5000):
                log.append(appends(events[start : start + 5000]))
        started = time.perf_counter()
        counts: Counter[str] = Counter()
        for _, data in log.read():
            counts[decode(data).run_id] += 1  # the simplest fold: events per run
        elapsed = time.perf_counter() - started
        scanned = sum(counts.values())
        print(f"replay (scan + decode + fold): {scanned / elapsed:>10,.0f} events/s ({scanned} events)")
        started = time.perf_counter()
        one_run = sum(1 for _ in log.read_run("run-1"))
        elapsed = time.perf_counter() - started
        print(f"read one run by index:         {one_run / elapsed:>10,.0f} events/s ({one_run} events)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="100k events instead of 1M")
    total = 100_000 if parser.parse_args().quick else 1_000_000
    bench_append(total)
    bench_replay(total)


if __name__ == "__main__":
    main()
