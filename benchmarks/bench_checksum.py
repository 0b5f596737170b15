"""What the records' checksums cost: append and replay throughput with and without them.

The same realistic trial events (bench_append's) are appended in groups of 5000 (the writer's
large batches) and replayed (scan + verify + decode) from a log written with checksums, and from
one written without (the record format of stores from before checksums, read the legacy way).
Then a real run's log (the engine's own events, python target) is folded into the run state, as
`engine replay` and the reports do. The two modes run interleaved, several rounds each, and the
median of each is compared; times are this process's CPU time (other load on the machine skews it
less than wall time, though caches still feel it). Also prints the bare cost of sealing and
verifying one event (wall time).

Target: checksums cost under 5% of append and of replay throughput.

    .venv/bin/python benchmarks/bench_checksum.py [--events N] [--rounds R] [--dir PATH]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_append import trial_events  # noqa: E402

import engine.store.log.reads as reads_module  # noqa: E402
import engine.store.log.writes as writes_module  # noqa: E402
from engine.events import kinds as k  # noqa: E402
from engine.events.codec import decode, encode_many  # noqa: E402
from engine.store.log.records import seal, unseal_run  # noqa: E402
from engine.store.open import open_event_log  # noqa: E402

GROUP = 5000


@contextmanager
def checksums(on: bool) -> Any:
    """Off: records are written bare and read without verification (what the log did before)."""
    saved = writes_module.seal, reads_module.unseal_many, reads_module.unseal_run
    if not on:
        writes_module.seal = lambda payload: payload  # type: ignore[assignment]
        reads_module.unseal_many = lambda seqs, records, checked_from: zip(seqs, records, strict=True)  # type: ignore[assignment]
        reads_module.unseal_run = lambda first, records, checked_from: enumerate(records, first)  # type: ignore[assignment]
    try:
        yield
    finally:
        writes_module.seal, reads_module.unseal_many, reads_module.unseal_run = saved  # type: ignore[assignment]


def append_rate(folder: Path, events: list[k.Event]) -> float:
    with open_event_log(folder) as log:
        start = time.process_time()
        for i in range(0, len(events), GROUP):
            group = events[i : i + GROUP]
            log.append(
                [
                    (e.run_id, k.TAG_BY_TYPE[type(e)], data)
                    for e, data in zip(group, encode_many(group), strict=True)
                ]
            )
        return len(events) / (time.process_time() - start)


def replay_rate(folder: Path) -> float:
    with open_event_log(folder, readonly=True) as log:
        start = time.process_time()
        count = sum(1 for _, data in log.read() if decode(data) is not None)
        return count / (time.process_time() - start)


def subject(request: Any) -> str:
    return "yes" if request.seed % 3 else "no"


def real_run(folder: Path, cases: int) -> str:
    """A real run through the engine (python target, exact grader): its log is what replay reads."""
    import trio

    from engine.api import open_engine, spec_from_dict

    spec = spec_from_dict({
        "name": "bench", "target": {"kind": "python", "callable": "subject"},
        "variants": [{"name": "a"}, {"name": "b", "params": {"t": 1}}],
        "cases": [{"id": f"c{i}", "prompt": "p", "expected": "yes"} for i in range(cases)],
        "repeat": {"count": 2},
    })  # fmt: skip

    async def go() -> None:
        async with open_engine(folder, callables={"subject": subject}) as eng:
            await eng.run(spec, run_id="bench")

    trio.run(go)
    return "bench"


def fold_rate(folder: Path) -> float:
    """Replay as `engine replay` and the reports do it: the run's events read, decoded and folded."""
    from engine.store.projections.run_state import load_run_state

    with open_event_log(folder, readonly=True) as log:
        events = log.last_seq()
        start = time.process_time()
        load_run_state(log, "bench")
        return events / (time.process_time() - start)


def per_event(label: str, work: Callable[[], object], n: int) -> None:
    start = time.perf_counter()
    work()
    print(f"{label}: {(time.perf_counter() - start) / n * 1e9:,.0f} ns per event")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument(
        "--cases", type=int, default=3000, help="cases of the real run folded (x 2 x 2 trials)"
    )
    args = parser.parse_args()
    events = trial_events(args.events, "bench")
    payloads = encode_many(events)
    sealed = [seal(p) for p in payloads]
    per_event("seal (CRC-32C appended)", lambda: [seal(p) for p in payloads], len(payloads))
    per_event("verify + strip, in runs", lambda: list(unseal_run(1, sealed, 1)), len(sealed))
    per_event("(a bare list of the same records)", lambda: list(enumerate(payloads, 1)), len(payloads))
    rates: dict[tuple[str, bool], list[float]] = {}
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        for round_ in range(args.rounds):
            for on in (True, False) if round_ % 2 == 0 else (False, True):
                folder = Path(tmp) / f"r{round_}-{on}"
                with checksums(on):
                    rates.setdefault(("append", on), []).append(append_rate(folder, events))
                    rates.setdefault(("replay", on), []).append(replay_rate(folder))
        runs = {}
        for on in (True, False):
            with checksums(on):
                runs[on] = Path(tmp) / f"run-{on}"
                real_run(runs[on], args.cases)
        for round_ in range(args.rounds):
            for on in (True, False) if round_ % 2 == 0 else (False, True):
                with checksums(on):
                    rates.setdefault(("replay + fold (a real run)", on), []).append(fold_rate(runs[on]))
    for what in ("append", "replay", "replay + fold (a real run)"):
        with_, without = statistics.median(rates[(what, True)]), statistics.median(rates[(what, False)])
        cost = (without - with_) / without * 100
        print(f"{what}: {with_:,.0f} events/s with checksums, {without:,.0f} without: cost {cost:+.1f}%")


if __name__ == "__main__":
    main()
