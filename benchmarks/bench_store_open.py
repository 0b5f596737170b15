"""What the store checks cost: the page walk done before every open, `engine check`, a backup.

Every command validates the data file before LMDB maps it (size, meta pages, every B-tree page's
number and kind: see store/log/files.py). This writes a log of N trial events (1M by default, 100k with
--quick) with an output blob per trial, then times that validation, a whole open, `EventLog.check`
(every event decoded, every blob hashed, LMDB's offline page verifier) and a compacted backup.

Target: the open-time validation stays under 300 ms per 1M events (a ~400 MiB log), a few ms for a
typical store of 10k events.

    .venv/bin/python benchmarks/bench_store_open.py [--quick] [--events N] [--dir PATH]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_append import encode_group, trial_events  # noqa: E402

from engine.store.blobs import pack_blob  # noqa: E402
from engine.store.log.event_log import EventLog  # noqa: E402
from engine.store.log.files import check_data_file, tree_pages  # noqa: E402
from engine.store.open import open_event_log  # noqa: E402

TARGET_MS_PER_MILLION = 300.0
GROUP = 5000


def timed(label: str, work: Callable[[], object], repeats: int = 3) -> float:
    best = min(_once(work) for _ in range(repeats))
    print(f"{label:<34} {best * 1000:9.1f} ms")
    return best


def _once(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def fill(path: Path, events: int) -> None:
    with open_event_log(path) as log:
        for start in range(0, events, GROUP):
            rows = encode_group(trial_events(min(GROUP, events - start), f"run-{start // 200_000}"))
            blobs = [pack_blob(f"output {start + i}: ".encode() * 8) for i in range(0, len(rows), 2)]
            log.append(rows, blobs=blobs)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--events", type=int)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    events = args.events or (100_000 if args.quick else 1_000_000)
    with tempfile.TemporaryDirectory(dir=args.dir) as folder:
        path = Path(folder)
        fill(path, events)
        size = (path / "data.mdb").stat().st_size
        pages = sum(len(p) for p in tree_pages(path)[1].values())
        print(f"store: {events} events, {size / 2**20:.1f} MiB, {pages} tree pages")
        walk = timed("validate before mapping", lambda: check_data_file(path))
        timed("open + close (read-only)", lambda: open_event_log(path, readonly=True).close())
        with open_event_log(path, readonly=True) as log:
            report = log.check()
            assert not report.problems, report.problems[:3]
            timed("engine check (everything)", log.check, repeats=1)
            timed("backup (compacted copy)", lambda: _backup(log, path), repeats=1)
    per_million = walk * 1000 * 1_000_000 / events
    verdict = "ok" if per_million <= TARGET_MS_PER_MILLION else "MISS"
    print(f"validation: {per_million:.1f} ms per 1M events (target <= {TARGET_MS_PER_MILLION:g}): {verdict}")
    return 0 if verdict == "ok" else 1


def _backup(log: EventLog, path: Path) -> None:
    with tempfile.TemporaryDirectory(dir=path.parent) as dest:
        log.backup(Path(dest))


if __name__ == "__main__":
    raise SystemExit(main())
