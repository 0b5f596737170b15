"""The LMDB event log on a real directory: order, indexes, blobs, growth, other processes, crashes."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import engine.store.log.reads
from engine.events import kinds as k
from engine.events.codec import decode, encode
from engine.store.blobs import COMPRESS_ABOVE, pack_blob, read_blob, read_text
from engine.store.errors import StoreDamagedError
from engine.store.log.event_log import Append
from engine.store.open import open_event_log
from tests.conftest import ROOT, SAFETY_S


def skipped(run_id: str, n: int, start: int = 0) -> list[k.TrialSkipped]:
    return [
        k.TrialSkipped(run_id=run_id, variant="v", case=f"c{start + i}", repeat=0, reason="x")
        for i in range(n)
    ]


def rows(events: list[k.Event]) -> list[tuple[str, str, bytes]]:
    return [(e.run_id, k.TAG_BY_TYPE[type(e)], encode(e)) for e in events]


def subprocess_env() -> dict[str, str]:
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path}


def run_python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", code, *args]
    return subprocess.run(command, capture_output=True, text=True, env=subprocess_env(), timeout=SAFETY_S)


# --- order and sequence numbers -------------------------------------------------------------------
def test_batches_get_dense_increasing_sequence_numbers(tmp_path: Path) -> None:
    a, b, c = skipped("a", 3), skipped("b", 2), skipped("a", 4, start=3)
    with open_event_log(tmp_path) as log:
        assert log.last_seq() == 0 and list(log.read()) == []
        assert log.append(rows(a)) == 3
        assert log.append(rows(b)) == 5
        assert log.append([]) == 5  # an empty batch is a no-op
        assert log.append([Append(*row) for row in rows(c)]) == 9  # Append tuples and plain tuples alike
        assert log.last_seq() == 9
        assert [(seq, decode(data)) for seq, data in log.read()] == list(enumerate(a + b + c, start=1))
    with open_event_log(tmp_path) as log:  # reopened: numbering goes on where it stopped
        assert log.last_seq() == 9
        assert log.append(rows(skipped("c", 1))) == 10


def test_read_ranges(tmp_path: Path) -> None:
    with open_event_log(tmp_path) as log:
        for start in range(0, 20, 5):
            log.append(rows(skipped("a", 5, start)))
        assert [seq for seq, _ in log.read(2, 4)] == [2, 3, 4]
        assert [seq for seq, _ in log.read(18)] == [18, 19, 20]
        assert [seq for seq, _ in log.read(0, 2)] == [1, 2]  # from_seq below 1 starts at 1
        assert [seq for seq, _ in log.read(7, 7)] == [7]
        assert list(log.read(5, 4)) == []
        assert list(log.read(21)) == []
        assert [seq for seq, _ in log.read(19, 1000)] == [19, 20]
        assert [decode(data).case for _, data in log.read(11, 12)] == ["c10", "c11"]


def test_reads_page_through_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine.store.log.reads, "READ_CHUNK", 4)
    with open_event_log(tmp_path) as log:
        log.append(rows(skipped("a", 9) + skipped("b", 9) + skipped("a", 3, start=9)))
        assert [seq for seq, _ in log.read()] == list(range(1, 22))
        assert [seq for seq, _ in log.read(3, 17)] == list(range(3, 18))
        assert [seq for seq, _ in log.read(5, 8)] == [5, 6, 7, 8]  # exactly one chunk
        assert [seq for seq, _ in log.read_run("a")] == [*range(1, 10), 19, 20, 21]
        assert [decode(d).case for _, d in log.read_run("a", from_seq=8)] == ["c7", "c8", "c9", "c10", "c11"]


# --- the run index ----------------------------------------------------------------------------------
def test_run_index_tags_and_filters(tmp_path: Path) -> None:
    with open_event_log(tmp_path) as log:
        started = k.RunStarted(run_id="zeta", experiment="e", trials_total=2)
        interleaved = [started, *skipped("alpha", 1), *skipped("zeta", 2)]
        log.append(rows(interleaved))
        cancel = k.CancelRequested(run_id="zeta", reason="stop")
        log.append(rows([cancel]))
        assert log.run_index("zeta") == [
            (1, "run.started"),
            (3, "trial.skipped"),
            (4, "trial.skipped"),
            (5, "cancel.requested"),
        ]
        assert log.run_index("zeta", from_seq=4) == [(4, "trial.skipped"), (5, "cancel.requested")]
        assert log.run_index("zeta", limit=2) == [(1, "run.started"), (3, "trial.skipped")]
        assert log.run_index("alpha") == [(2, "trial.skipped")]
        assert log.run_index("nobody") == []
        only = [decode(data) for _, data in log.read_run("zeta", tags={"cancel.requested", "run.started"})]
        assert only == [started, cancel]
        assert [seq for seq, _ in log.read_run("zeta", from_seq=2)] == [3, 4, 5]
        assert list(log.read_run("zeta", tags=set())) == []


def test_run_ids_in_order_of_first_event_even_when_names_share_prefixes(tmp_path: Path) -> None:
    with open_event_log(tmp_path) as log:
        assert log.run_ids() == []
        log.append(rows(skipped("run-b", 1) + skipped("run", 1) + skipped("run-b", 1)))
        log.append(rows(skipped("run-a", 2) + skipped("ru", 1) + skipped("run", 1)))
        assert log.run_ids() == ["run-b", "run", "run-a", "ru"]
        assert [seq for seq, _ in log.run_index("run")] == [2, 7]
        assert [seq for seq, _ in log.run_index("ru")] == [6]


def test_threads_appending_share_one_dense_sequence(tmp_path: Path) -> None:
    with open_event_log(tmp_path) as log:

        def writer(run_id: str) -> None:
            for i in range(20):
                log.append(rows(skipped(run_id, 5, start=5 * i)))

        threads = [threading.Thread(target=writer, args=(f"t{n}",)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert log.last_seq() == 400
        assert [seq for seq, _ in log.read()] == list(range(1, 401))
        for n in range(4):  # each thread's events are in its own order, batches whole
            cases = [decode(data).case for _, data in log.read_run(f"t{n}")]
            assert cases == [f"c{i}" for i in range(100)]


# --- blobs --------------------------------------------------------------------------------------------
def test_blobs_small_and_compressed(tmp_path: Path) -> None:
    small, large = "héllo".encode(), ("lorem ipsum " * 2000).encode()
    random_large = random.Random(1).randbytes(COMPRESS_ABOVE * 2)  # does not compress: stored raw
    packed = [pack_blob(small), pack_blob(large), pack_blob(random_large)]
    assert packed[0][1][:1] == b"\x00" and packed[1][1][:1] == b"\x01" and packed[2][1][:1] == b"\x00"
    assert len(packed[1][1]) < len(large) // 5
    with open_event_log(tmp_path) as log:
        log.append(rows(skipped("a", 1)), blobs=packed)
        assert read_blob(log, packed[0][0]) == small
        assert read_text(log, packed[0][0]) == "héllo"
        assert read_blob(log, packed[1][0]) == large
        assert read_blob(log, packed[2][0]) == random_large
        with pytest.raises(StoreDamagedError, match="blob 0000000000000000 is missing"):
            read_blob(log, "0" * 64)  # an event names only blobs stored with it: missing is damage
        # content addressed: storing the same bytes again is harmless
        log.append(rows(skipped("a", 1)), blobs=[pack_blob(large), pack_blob(large)])
        assert read_blob(log, packed[1][0]) == large
    with open_event_log(tmp_path) as log:
        assert read_blob(log, packed[1][0]) == large


def test_map_size_grows_by_itself(tmp_path: Path) -> None:
    blob = random.Random(2).randbytes(64 << 10)
    with open_event_log(tmp_path, map_size=1 << 20) as log:
        for i in range(64):  # ~4 MiB of incompressible blobs, one batch at a time, into a 1 MiB map
            log.append(rows(skipped("a", 1, i)), blobs=[(f"{i:064x}", blob)])
        m = "m" * 300
        # ~3 MiB of events in one transaction: the map doubles until it fits, the batch goes in whole
        big = [
            k.TrialFailed(run_id="b", variant="v", case=f"c{i}", repeat=0, error_kind="model", message=m)
            for i in range(10_000)
        ]
        assert log.append(rows(big)) == 64 + 10_000
        assert log.map_size() >= 8 << 20
        assert sum(1 for _ in log.read_run("b")) == 10_000
        assert log.get_blob(f"{63:064x}") == blob


# --- other processes ----------------------------------------------------------------------------------
READER = """
import sys
from engine.events.codec import decode
from engine.store.open import open_event_log
with open_event_log(sys.argv[1]) as log:
    events = [decode(data) for _, data in log.read_run("a")]
    print(log.last_seq(), len(events), events[-1].case if events else "-", log.run_ids())
"""


def test_another_process_reads_what_was_committed(tmp_path: Path) -> None:
    with open_event_log(tmp_path) as log:
        log.append(rows(skipped("a", 7)))
        out = run_python(READER, str(tmp_path))
        assert out.stdout.split() == ["7", "7", "c6", "['a']"], out.stderr
        log.append(rows(skipped("a", 3, start=7) + skipped("b", 1)))
        out = run_python(READER, str(tmp_path))
        assert out.stdout.split() == ["11", "10", "c9", "['a',", "'b']"], out.stderr


GROWER = """
import sys
from engine.events import kinds as k
from engine.events.codec import encode
from engine.store.open import open_event_log
blob = bytes(range(256)) * 256
with open_event_log(sys.argv[1], map_size=1 << 20) as log:
    for i in range(100):
        e = k.TrialSkipped(run_id="other", variant="v", case=f"c{i}", repeat=0, reason="x")
        log.append([(e.run_id, "trial.skipped", encode(e))], blobs=[(f"{i:064x}", blob)])
    print(log.map_size())
"""


def test_a_map_grown_by_another_process_is_adopted(tmp_path: Path) -> None:
    with open_event_log(tmp_path, map_size=1 << 20) as log:
        log.append(rows(skipped("mine", 2)))
        out = run_python(GROWER, str(tmp_path))  # ~6 MiB written by another process while this one is open
        assert out.returncode == 0, out.stderr
        assert int(out.stdout) > log.map_size() == 1 << 20
        assert log.last_seq() == 102  # the read transaction adopts the bigger map
        assert log.run_ids() == ["mine", "other"]
        assert log.get_blob(f"{99:064x}") == bytes(range(256)) * 256
        assert log.append(rows(skipped("mine", 1, 2))) == 103  # and so does the next write
        assert log.map_size() == int(out.stdout)


WRITER = """
import sys
from engine.events import kinds as k
from engine.events.codec import encode
from engine.store.open import open_event_log
with open_event_log(sys.argv[1], map_size=1 << 20) as log:
    batch = log.last_seq() // 100
    while True:
        events = [
            k.TrialSkipped(run_id="w", variant="v", case=f"c{batch}", repeat=j, reason="x" * 40)
            for j in range(100)
        ]
        rows = [(e.run_id, "trial.skipped", encode(e)) for e in events]
        log.append(rows, blobs=[(f"{batch:064x}", b"x" * 5000)])
        print(batch, flush=True)  # after each durable batch: the test kills after a seeded one
        batch += 1
"""


def test_a_killed_writer_leaves_only_whole_batches(tmp_path: Path) -> None:
    rng = random.Random()
    seed = rng.randrange(1 << 30)
    rng.seed(seed)
    last = 0
    for kill in range(5):
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(tmp_path)], env=subprocess_env(), stdout=subprocess.PIPE
        )
        assert proc.stdout is not None
        # a seeded kill point, reached by reading the writer's own reports (no timing involved): the
        # writer goes on appending meanwhile, so the kill lands somewhere mid-stream past it
        for _ in range(rng.randrange(1, 200)):
            assert proc.stdout.readline(), "the writer stopped early"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        with open_event_log(tmp_path) as log:
            previous, last = last, log.last_seq()
            context = f"seed {seed}, kill {kill}, last_seq {last}"
            assert last % 100 == 0 and last > previous, context
            events = [decode(data) for _, data in log.read()]  # every event decodes
            assert len(events) == last == len(log.run_index("w")), context
            for seq, event in enumerate(events, start=1):
                assert (event.case, event.repeat) == (f"c{(seq - 1) // 100}", (seq - 1) % 100), context
            # blobs commit with their batch: one per batch, none for a batch that did not make it
            batches = last // 100
            assert all(log.get_blob(f"{b:064x}") == b"x" * 5000 for b in range(batches)), context
            assert log.get_blob(f"{batches:064x}") is None, context
