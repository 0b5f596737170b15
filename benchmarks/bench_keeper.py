"""What keeping projection snapshots costs the writer: CPU per appended event with and without the
snapshot keeper (which decodes each event of a run and folds it into the run's kept states).

    .venv/bin/python benchmarks/bench_keeper.py [--events 200000] [--cases 500] [--dir /dev/shm]

Trial events (started, completed, graded, skipped) of one run over 2 variants x `--cases` cases,
appended in batches of 1,000 to a fresh LMDB store, rounds alternating without the keeper, with it,
and (with `--cases` past 2,500, where the two differ) with the report state saved every 5,000
events as before (not every max(5,000, cells)); CPU time, not wall time (a durable commit waits on
the disk). `--events 400000 --cases 50000`: a state growing to 100,000 cells.
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

import engine.store.kept.snapshots as snapshots  # noqa: E402
from engine.events import kinds as k  # noqa: E402
from engine.events.codec import encode  # noqa: E402
from engine.events.kinds import TAG_BY_TYPE  # noqa: E402
from engine.store.open import open_event_log  # noqa: E402

Rows = list[tuple[str, str, bytes]]


def batches(events: int, cases: int) -> list[Rows]:
    out: list[Rows] = []
    for b in range(events // 1000):
        rows: Rows = []
        for j in range(250):
            i = b * 250 + j
            ident = {"run_id": "w", "variant": f"v{i % 2}", "case": f"c{i % cases}", "repeat": i // 1000}
            trial = (
                k.TrialStarted(**ident),
                k.TrialCompleted(**ident, output_hash="o", latency_ms=3.0),
                k.TrialGraded(**ident, score=1.0, passed=True),
                k.TrialSkipped(**ident, reason="x"),
            )
            rows += [(e.run_id, TAG_BY_TYPE[type(e)], encode(e)) for e in trial]
        out.append(rows)
    return out


def cpu_per_event(rows: list[Rows], folder: str, keep: str) -> float:
    advance, sized = snapshots.Keeper.advance, dict(snapshots.SIZED)
    if keep == "without":
        snapshots.Keeper.advance = lambda self, io, batch, first: None  # type: ignore[method-assign]
    if keep == "every 5,000 (before)":
        snapshots.SIZED.clear()
    try:
        with tempfile.TemporaryDirectory(dir=folder) as store, open_event_log(store, map_size=1 << 30) as log:
            start = time.process_time()
            for batch in rows:
                log.append(batch)
            return (time.process_time() - start) / sum(map(len, rows))
    finally:
        snapshots.Keeper.advance = advance  # type: ignore[method-assign]
        snapshots.SIZED.update(sized)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--cases", type=int, default=500, help="per variant (2 variants)")
    parser.add_argument("--dir", default="/dev/shm" if Path("/dev/shm").is_dir() else None)
    args = parser.parse_args()
    rows = batches(args.events, args.cases)
    print(f"load average {os.getloadavg()[0]:.1f}; {args.events:,} events in batches of 1,000")
    modes = ["without", "with", *(["every 5,000 (before)"] if args.cases > 2500 else [])]
    for keep in modes * 2:
        us = cpu_per_event(rows, args.dir, keep) * 1e6
        name = f"with the keeper, {keep}" if "before" in keep else f"{keep} the snapshot keeper"
        print(f"  {name}: {us:.2f} us CPU per event", flush=True)


if __name__ == "__main__":
    main()
