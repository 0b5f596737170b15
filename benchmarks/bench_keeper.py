"""What keeping projection snapshots costs the writer: CPU per appended event with and without the
snapshot keeper (which decodes each event of a run and folds it into the run's kept states).

    .venv/bin/python benchmarks/bench_keeper.py [--events 200000] [--dir /dev/shm]

Trial events (started, completed, graded, skipped) of one run, appended in batches of 1,000 to a
fresh LMDB store, four rounds alternating without and with the keeper; CPU time, not wall time (a
durable commit waits on the disk).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import engine.store.snapshots as snapshots  # noqa: E402
from engine.events import kinds as k  # noqa: E402
from engine.events.codec import encode  # noqa: E402
from engine.events.kinds import TAG_BY_TYPE  # noqa: E402
from engine.store.log import EventLog  # noqa: E402

Rows = list[tuple[str, str, bytes]]


def batches(events: int) -> list[Rows]:
    out: list[Rows] = []
    for b in range(events // 1000):
        rows: Rows = []
        for j in range(250):
            i = b * 250 + j
            ident = {"run_id": "w", "variant": f"v{i % 2}", "case": f"c{i % 500}", "repeat": i // 1000}
            trial = (
                k.TrialStarted(**ident),
                k.TrialCompleted(**ident, output_hash="o", latency_ms=3.0),
                k.TrialGraded(**ident, score=1.0, passed=True),
                k.TrialSkipped(**ident, reason="x"),
            )
            rows += [(e.run_id, TAG_BY_TYPE[type(e)], encode(e)) for e in trial]
        out.append(rows)
    return out


def cpu_per_event(rows: list[Rows], folder: str, keep: bool) -> float:
    advance = snapshots.Keeper.advance
    if not keep:
        snapshots.Keeper.advance = lambda self, io, batch, first: None  # type: ignore[method-assign]
    try:
        with tempfile.TemporaryDirectory(dir=folder) as store, EventLog(store, map_size=1 << 28) as log:
            start = time.process_time()
            for batch in rows:
                log.append(batch)
            return (time.process_time() - start) / sum(map(len, rows))
    finally:
        snapshots.Keeper.advance = advance  # type: ignore[method-assign]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--dir", default="/dev/shm" if Path("/dev/shm").is_dir() else None)
    args = parser.parse_args()
    rows = batches(args.events)
    print(f"load average {os.getloadavg()[0]:.1f}; {args.events:,} events in batches of 1,000")
    for keep in (False, True, False, True):
        us = cpu_per_event(rows, args.dir, keep) * 1e6
        print(f"  {'with' if keep else 'without'} the snapshot keeper: {us:.2f} us CPU per event")


if __name__ == "__main__":
    main()
