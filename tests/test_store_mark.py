"""The mark that lets an open skip the page walk (store/log/validated.py), on real LMDB files: set by
an engine writer, honoured only while the file is in the state it records, so damage, a copy or a
commit by another LMDB writer all bring the walk back."""

from __future__ import annotations

import errno
import shutil
import subprocess
import sys
from pathlib import Path

import lmdb
import pytest

from engine.store.errors import StoreDamagedError
from engine.store.log.event_log import EventLog
from engine.store.log.files import tree_pages
from engine.store.log.handles import ALL_TREES, SMALL_TREES
from engine.store.log.validated import marked_whole, state_now
from tests.conftest import engine_env


def filled(path: Path) -> Path:
    with EventLog(path) as log:
        for b in range(40):
            log.append([("run", "trial.skipped", bytes([b]) * 300) for _ in range(50)])
    return path


def walked_at_open(path: Path) -> set[str]:
    with EventLog(path, readonly=True) as log:
        return set(log._walked)


def test_a_store_an_engine_writer_closed_opens_without_a_walk(tmp_path: Path) -> None:
    store = filled(tmp_path / "st")
    assert marked_whole(store, state_now(store))
    assert walked_at_open(store) == ALL_TREES  # nothing left to walk when first read
    with EventLog(store, readonly=True) as log:
        assert len(list(log.read_run("run"))) == 2000


def test_a_page_zeroed_after_the_mark_is_still_refused(tmp_path: Path) -> None:
    store = filled(tmp_path / "st")
    page_size, trees = tree_pages(store)
    with (store / "data.mdb").open("r+b") as file:
        file.seek(trees["events"][-1] * page_size)
        file.write(bytes(page_size))
    assert not marked_whole(store, state_now(store))
    with pytest.raises(StoreDamagedError, match="not a tree page"):
        EventLog(store)  # a writer walks every page again
    with EventLog(store, readonly=True) as log, pytest.raises(StoreDamagedError, match="not a tree page"):
        list(log.read())


def test_a_copy_is_walked_again(tmp_path: Path) -> None:
    store = filled(tmp_path / "st")
    copy = tmp_path / "copy"
    shutil.copytree(store, copy)  # the mark comes along, the inode does not
    assert not marked_whole(copy, state_now(copy))
    assert walked_at_open(copy) == SMALL_TREES
    EventLog(copy).close()  # a writer walks it, and marks the copy
    assert walked_at_open(copy) == ALL_TREES


def test_a_commit_by_another_lmdb_writer_brings_the_walk_back(tmp_path: Path) -> None:
    store = filled(tmp_path / "st")
    env = lmdb.open(str(store), max_dbs=8)
    with env.begin(write=True, db=env.open_db(b"meta")) as txn:
        txn.put(b"someone-else", b"1")
    env.close()
    assert walked_at_open(store) == SMALL_TREES
    with EventLog(store) as log:  # an engine writer that reads only: the newest commit is not its
        log.last_seq()
    assert walked_at_open(store) == ALL_TREES  # but it walked every page when it opened


def test_a_reader_that_walked_every_tree_marks_a_copy(tmp_path: Path) -> None:
    store = filled(tmp_path / "st")
    copy = tmp_path / "copy"
    shutil.copytree(store, copy)  # a restored backup, say: every read would walk what it reads
    with EventLog(copy, readonly=True) as log:
        assert len(list(log.read_run("run"))) == 2000  # some trees walked: not yet a mark
        assert not marked_whole(copy, state_now(copy))
        log.check()  # `engine check` walks every tree (its findings on these bare records aside)
    assert marked_whole(copy, state_now(copy))
    assert walked_at_open(copy) == ALL_TREES


def test_a_reader_does_not_mark_a_file_committed_to_since_it_opened(tmp_path: Path) -> None:
    store = filled(tmp_path / "st")
    copy = tmp_path / "copy"
    shutil.copytree(store, copy)
    with EventLog(copy, readonly=True) as reader:
        # a writer in another process walks and marks the copy as it was, then commits to it and is
        # killed before it closes (its mark stays the old state's)
        commit = (
            "import os, sys; from engine.store.log.event_log import EventLog; "
            "log = EventLog(__import__('pathlib').Path(sys.argv[1])); "
            "log.append([('run', 'trial.skipped', b'x')]); os._exit(0)"
        )
        subprocess.run([sys.executable, "-c", commit, str(copy)], check=True, env=engine_env())
        reader.check()
    assert not marked_whole(copy, state_now(copy))


def test_a_reader_told_never_to_write_leaves_no_mark(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = filled(tmp_path / "st")
    copy = tmp_path / "copy"
    shutil.copytree(store, copy)
    (copy / "validated").unlink()
    monkeypatch.setenv("ENGINE_STORE_READONLY", "1")  # a backup, a copy: nothing written beside it
    with EventLog(copy, readonly=True) as log:
        log.check()
    assert not (copy / "validated").exists()


def test_a_mark_that_cannot_be_written_is_left_to_the_next_walk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = filled(tmp_path / "st")
    copy = tmp_path / "copy"
    shutil.copytree(store, copy)

    def read_only_mount(*_: object, **__: object) -> None:
        raise OSError(errno.EROFS, "Read-only file system")  # the write and the clean-up alike

    monkeypatch.setattr(Path, "write_text", read_only_mount)
    monkeypatch.setattr(Path, "unlink", read_only_mount)
    with EventLog(copy, readonly=True) as log:
        log.check()  # walked every tree: it tries to mark, and cannot; the check goes on
    assert not marked_whole(copy, state_now(copy))
