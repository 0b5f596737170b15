"""People's labels at scale: a 50,000-trial run graded by two judges, with 1,000 labels; the time to
build the report's agreement section (fold the run's labels, outputs and judge verdicts from the
log, then kappa and the rest for each judge), the labelling queue, and one label appended.

The run's events are the engine's own (TrialCompleted, TrialGraded with judge grades,
LabelRecorded), encoded by its codec and appended to a real LMDB store in batches.

    .venv/bin/python benchmarks/bench_labels.py [--quick] [--trials N] [--labels N]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

from engine.events import kinds as k
from engine.events.codec import encode
from engine.input.labels_file import LabelRow
from engine.runtime.label_record import record_labels
from engine.store.log.event_log import Append
from engine.store.open import open_event_log
from engine.store.projections.label_agreement import label_agreement
from engine.store.projections.labels import load_labelled, load_labels
from engine.web.label_queue import label_queue

RUN = "big"
BATCH = 5000


def trial_events(trials: int, rng: random.Random) -> list[Append]:
    out: list[Append] = []
    for i in range(trials):
        variant, case, repeat = f"v{i % 2}", f"case{i // 10:05d}", (i // 2) % 5
        done = k.TrialCompleted(
            run_id=RUN, ts=1.0, variant=variant, case=case, repeat=repeat,
            output_hash=f"{i:064x}", latency_ms=12.5, tokens_in=40, tokens_out=60,
        )  # fmt: skip
        grades = [
            k.GraderResult(name=name, score=s, passed=s >= 0.5, judge_model="m", prompt_hash="p", raw="{}")
            for name, s in (("judge", rng.random()), ("strict", rng.random()))
        ]
        graded = k.TrialGraded(
            run_id=RUN, ts=1.0, variant=variant, case=case, repeat=repeat, score=grades[0].score,
            passed=grades[0].passed, grades=grades,
        )  # fmt: skip
        out += [Append(RUN, "trial.completed", encode(done)), Append(RUN, "trial.graded", encode(graded))]
    return out


def build(path: Path, trials: int, labels: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    events = trial_events(trials, rng)
    with open_event_log(path) as log:
        for start in range(0, len(events), BATCH):
            log.append(events[start : start + BATCH])
        keys = rng.sample(range(trials), labels)
        rows = [
            (f"row {n}", LabelRow(case=f"case{i // 10:05d}", variant=f"v{i % 2}", repeat=(i // 2) % 5 + 1,
                                  verdict=rng.choice(("pass", "fail")), by="bench"))
            for n, i in enumerate(keys, 1)
        ]  # fmt: skip
        record_labels(log, RUN, rows)


def timed(fn, samples: int) -> list[float]:  # noqa: ANN001
    found = []
    for _ in range(samples):
        start = time.perf_counter()
        fn()
        found.append((time.perf_counter() - start) * 1000)
    return found


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--quick", action="store_true", help="5,000 trials, 100 labels")
    parser.add_argument("--trials", type=int, default=50_000)
    parser.add_argument("--labels", type=int, default=1_000)
    parser.add_argument("--samples", type=int, default=5)
    args = parser.parse_args()
    trials, labels = (5_000, 100) if args.quick else (args.trials, args.labels)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "st"
        start = time.perf_counter()
        build(path, trials, labels)
        took = time.perf_counter() - start
        print(f"built {trials:,} trials (2 judges) + {labels:,} labels in {took:.1f} s")
        with open_event_log(path) as log:
            section = label_agreement(load_labelled(log, RUN))
            assert section == label_agreement(load_labels(log, RUN))  # the short path, the same figures
            agreement = timed(lambda: label_agreement(load_labelled(log, RUN)), args.samples)
            fold = timed(lambda: load_labels(log, RUN), args.samples)
            state = load_labels(log, RUN)
            queue = timed(lambda: label_queue(state), args.samples)
            row = [("one", LabelRow(case="case00000", variant="v0", repeat=1, verdict="pass", by="bench"))]
            one = timed(lambda: record_labels(log, RUN, row), args.samples)
        for judge in section.judges:
            interval = f"[{judge.kappa_low}, {judge.kappa_high}]"
            print(f"  {judge.grader}: {judge.labelled} labelled, kappa {judge.kappa} {interval}")
    load = os.getloadavg()[0]
    figures = [
        ("agreement section (fold + figures)", agreement), ("every trial's fold (the queue's)", fold),
        ("labelling queue (from the fold)", queue), ("one label (check + append)", one),
    ]  # fmt: skip
    for name, found in figures:
        print(f"{name:38s} median {statistics.median(found):7.1f} ms  max {max(found):7.1f} ms")
    print(f"load average {load:.1f} on {os.cpu_count()} CPUs; target: agreement section < 1000 ms")


if __name__ == "__main__":
    main()
