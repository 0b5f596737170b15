"""The file checks done before LMDB maps a store (store/log/files.py, lmdb_pages.py, leaves.py), on real
LMDB files: both the per-page and the bulk (numpy) record checks, large values in overflow pages,
a store another process is creating, and a walk while a writer commits."""

from __future__ import annotations

import random
import struct
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from engine.store.blobs import pack_blob
from engine.store.errors import StoreDamagedError
from engine.store.log import lmdb_pages
from engine.store.log.files import check_data_file, tree_pages
from engine.store.open import open_event_log

BULK = [pytest.param(0, id="bulk"), pytest.param(10**9, id="per-page")]


def fill(path: Path, batches: int, big: bool = False) -> None:
    with open_event_log(path) as log:
        for b in range(batches):
            rows = [("run", "trial.skipped", bytes([b % 256]) * 300) for _ in range(50)]
            blobs = [pack_blob(random.Random(b).randbytes(10_000))] if big else []  # incompressible
            log.append(rows, blobs=blobs)


def first_record(path: Path, database: str) -> tuple[int, int]:
    """(file offset of the first record of a leaf in the middle of `database`, page size)."""
    page_size, trees = tree_pages(path)
    data = (path / "data.mdb").read_bytes()
    for page in trees[database][len(trees[database]) // 2 :]:
        offset = page * page_size
        flags, lower = struct.unpack_from("<HH", data, offset + 10)
        if flags & lmdb_pages.P_LEAF and lower > lmdb_pages.PAGE_HEADER:
            return offset + struct.unpack_from("<H", data, offset + 16)[0], page_size
    raise AssertionError(f"no leaf in {database}")


def patch(path: Path, at: int, value: bytes) -> None:
    with (path / "data.mdb").open("r+b") as file:
        file.seek(at)
        file.write(value)


@pytest.mark.parametrize("bulk_from", BULK)
def test_a_record_size_past_its_page_is_damage(tmp_path: Path, monkeypatch, bulk_from: int) -> None:
    monkeypatch.setattr(lmdb_pages, "BULK_FROM", bulk_from)
    fill(tmp_path, 60)
    check_data_file(tmp_path)  # sound as written
    node, _ = first_record(tmp_path, "events")
    patch(tmp_path, node, b"\xff\xff\x01\x00")  # its value's size: 131071 bytes
    with pytest.raises(StoreDamagedError, match="a value past the page end"):
        open_event_log(tmp_path)


@pytest.mark.parametrize("bulk_from", BULK)
def test_overflow_values_pass_and_a_pointer_past_the_file_is_damage(
    tmp_path: Path, monkeypatch, bulk_from: int
) -> None:
    monkeypatch.setattr(lmdb_pages, "BULK_FROM", bulk_from)
    fill(tmp_path, 40, big=True)  # 10 KiB blobs: each in overflow pages
    check_data_file(tmp_path)
    node, _ = first_record(tmp_path, "blobs")
    data = (tmp_path / "data.mdb").read_bytes()
    flags, key_size = struct.unpack_from("<HH", data, node + 4)
    assert flags & lmdb_pages.F_BIGDATA
    patch(tmp_path, node + 8 + key_size, struct.pack("<Q", 10**9))
    with pytest.raises(StoreDamagedError, match="past the last page"):
        open_event_log(tmp_path)


def test_an_empty_file_is_a_new_store_only_while_its_creator_holds_the_lock(tmp_path: Path) -> None:
    (tmp_path / "data.mdb").write_bytes(b"")
    (tmp_path / "lock.mdb").write_bytes(b"\0" * 64)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(tmp_path / "lock.mdb")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
    )  # fmt: skip
    assert holder.stdout is not None and holder.stdin is not None
    try:
        assert holder.stdout.readline() == b"locked\n"  # LMDB's creator holds this while it writes metas
        assert check_data_file(tmp_path) is False  # being created: not damage, not mapped yet
        with open_event_log(tmp_path, readonly=True) as log:  # every reader sees an empty store
            assert (log.run_ids(), log.last_seq(), log.check().problems) == ([], 0, [])
    finally:
        holder.stdin.close()
        holder.wait(timeout=300)
    with pytest.raises(StoreDamagedError, match="empty"):
        check_data_file(tmp_path)


HOLD_LOCK = """
import fcntl, sys
lock = open(sys.argv[1], "r+b")
fcntl.lockf(lock, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 0)
print("locked", flush=True)
sys.stdin.read()
"""


def test_no_false_damage_while_a_writer_commits(tmp_path: Path) -> None:
    fill(tmp_path, 5)
    done = threading.Event()

    def write() -> None:
        try:
            fill(tmp_path, 300, big=True)
        finally:
            done.set()

    writer = threading.Thread(target=write)
    writer.start()
    walks = 0
    while not done.is_set() or walks == 0:  # as many walks as the writer's commits allow
        check_data_file(tmp_path)
        walks += 1
    writer.join()
    check_data_file(tmp_path)
