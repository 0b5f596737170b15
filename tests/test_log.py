"""The LMDB event log on a real file: order, indexes, blobs, growth, other processes, crashes."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from events import kinds as k
from events.codec import decode, encode
from store.blobs import pack_blob, read_blob
from store.log import EventLog
from tests.conftest import ROOT


def rows(run_id: str, n: int, start: int = 0) -> list[tuple[str, str, bytes]]:
    events = [
        k.TrialSkipped(run_id=run_id, variant="v", case=f"c{start + i}", repeat=0, reason="x")
        for i in range(n)
    ]
    return [(e.run_id, "trial.skipped", encode(e)) for e in events]


def test_batches_get_dense_increasing_sequence_numbers(tmp_path: Path) -> None:
    with EventLog(tmp_path) as log:
        assert log.last_seq() == 0
        assert log.append(rows("a", 3)) == 3
        assert log.append(rows("b", 2)) == 5
        assert log.append([]) == 5
        seqs = [seq for seq, _ in log.read()]
        assert seqs == [1, 2, 3, 4, 5]
        assert [seq for seq, _ in log.read(2, 4)] == [2, 3, 4]
        assert [decode(data).run_id for _, data in log.read(4)] == ["b", "b"]


def test_run_index_tags_and_run_order(tmp_path: Path) -> None:
    with EventLog(tmp_path) as log:
        log.append(rows("zeta", 2) + rows("alpha", 1))
        cancel = k.CancelRequested(run_id="zeta", reason="stop")
        log.append([("zeta", "cancel.requested", encode(cancel))])
        assert log.run_ids() == ["zeta", "alpha"]  # by first event, not by name
        assert [tag for _, tag in log.run_index("zeta")] == [
            "trial.skipped",
            "trial.skipped",
            "cancel.requested",
        ]
        only = [decode(data) for _, data in log.read_run("zeta", tags={"cancel.requested"})]
        assert only == [cancel]
        assert [seq for seq, _ in log.read_run("zeta", from_seq=2)] == [2, 4]


def test_blobs_small_and_compressed(tmp_path: Path) -> None:
    small, large = b"hello", ("lorem ipsum " * 2000).encode()
    with EventLog(tmp_path) as log:
        packed = [pack_blob(small), pack_blob(large)]
        assert len(packed[1][1]) < len(large) // 5
        log.append(rows("a", 1), blobs=packed)
        assert read_blob(log, packed[0][0]) == small and read_blob(log, packed[1][0]) == large
        assert read_blob(log, "0" * 64) is None


def test_map_size_grows_by_itself(tmp_path: Path) -> None:
    with EventLog(tmp_path, map_size=1 << 20) as log:
        blob = os.urandom(64 << 10)
        for i in range(100):  # ~6 MiB of incompressible blobs into a 1 MiB map
            log.append(rows("a", 1, i), blobs=[(f"{i:064x}", blob)])
        assert log.map_size() > 4 << 20 and log.last_seq() == 100


READER = """
import sys
from store.log import EventLog
with EventLog(sys.argv[1]) as log:
    print(log.last_seq(), len(list(log.read_run("a"))))
"""


def test_another_process_reads_what_was_committed(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with EventLog(tmp_path) as log:
        log.append(rows("a", 7))
        out = subprocess.run(
            [sys.executable, "-c", READER, str(tmp_path)], capture_output=True, text=True, env=env
        )
        assert out.stdout.split() == ["7", "7"], out.stderr
        log.append(rows("a", 3))
        out = subprocess.run(
            [sys.executable, "-c", READER, str(tmp_path)], capture_output=True, text=True, env=env
        )
        assert out.stdout.split() == ["10", "10"]


WRITER = """
import sys
from events import kinds as k
from events.codec import encode
from store.log import EventLog
with EventLog(sys.argv[1], map_size=1 << 20) as log:
    i = 0
    while True:
        batch = [
            k.TrialSkipped(run_id="w", variant="v", case=f"c{i}", repeat=j, reason="x") for j in range(100)
        ]
        rows = [(e.run_id, "trial.skipped", encode(e)) for e in batch]
        log.append(rows, blobs=[(f"{i:064x}", b"x" * 5000)])
        i += 1
        print(i, flush=True)
"""


def test_a_killed_writer_leaves_only_whole_batches(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    rng = random.Random(5)
    for _ in range(4):
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(tmp_path)], env=env, stdout=subprocess.PIPE
        )
        assert proc.stdout is not None
        proc.stdout.readline()  # at least one batch is in
        time.sleep(rng.uniform(0.02, 0.4))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        with EventLog(tmp_path) as log:
            last = log.last_seq()
            assert last % 100 == 0 and last > 0
            events = [decode(data) for _, data in log.read()]
            assert len(events) == last == len(log.run_index("w"))
            assert log.get_blob(f"{0:064x}") == b"x" * 5000  # blobs commit with their batch
