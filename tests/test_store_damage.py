"""A damaged, read-only or full store, through the real CLI on real LMDB files damaged on purpose.

Every case ends in one line and exit 2 (1 for a full disk): never a SIGBUS, an abort, a traceback,
or a damaged store silently taken for a new one.
"""

from __future__ import annotations

import hashlib
import os
import random
import resource
import shutil
import signal
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import lmdb
import pytest

from engine.store.log.event_log import EventLog
from engine.store.log.files import tree_pages
from engine.store.open import open_event_log
from tests.conftest import engine_cmd, engine_env, run_engine

READERS = ("list", "report", "status", "replay", "export")
EXPERIMENT = """
name = "damage"
seed = 3
[target]
kind = "local"
[params]
max_tokens = 24
[[variants]]
name = "a"
[[variants]]
name = "b"
params = { temperature = 0.2 }
[repeat]
count = 3
""" + "".join(
    f'[[cases]]\nid = "case-{i}"\nprompt = "Say something about topic {i}."\nexpected = "topic"\n'
    for i in range(12)
)


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One real store with one finished run (built once; each test damages its own copy)."""
    folder = tmp_path_factory.mktemp("pristine")
    (folder / "exp.toml").write_text(EXPERIMENT)
    done = run_engine("run", "exp.toml", "--run-id", "r1", "-q", "--json", "--store", "st", cwd=folder)
    assert done.returncode == 0, done.stderr
    return folder


@pytest.fixture
def store(pristine: Path, tmp_path: Path) -> Iterator[Path]:
    shutil.copy(pristine / "exp.toml", tmp_path / "exp.toml")
    shutil.copytree(pristine / "st", tmp_path / "st")
    yield tmp_path / "st"
    for path in (tmp_path / "st", *(tmp_path / "st").iterdir()):  # let pytest clean up after chmod
        path.chmod(path.stat().st_mode | stat.S_IWUSR)


def engine(store: Path, *args: str, **env: str) -> tuple[int, str]:
    done = run_engine(*args, "--store", str(store), cwd=store.parent, **env)
    err = done.stderr.decode()
    assert "Traceback" not in err, err
    return done.returncode, err


def assert_refused(store: Path, *needles: str, commands: tuple[str, ...] = READERS) -> None:
    for command in commands:
        code, err = engine(store, command)
        assert code == 2, (command, err)
        lines = err.strip().splitlines()
        assert len(lines) == 1 or command == "check", (command, err)  # check lists each problem
        assert "store damaged" in lines[-1] and all(n in err for n in needles), (command, err)


def zero_pages(store: Path, pages: list[int], page_size: int) -> None:
    with (store / "data.mdb").open("r+b") as file:
        for page in pages:
            file.seek(page * page_size)
            file.write(bytes(page_size))


def test_truncated_data_file_is_refused_by_every_command(store: Path) -> None:
    size = (store / "data.mdb").stat().st_size
    os.truncate(store / "data.mdb", size // 2)
    assert_refused(store, "truncated", commands=(*READERS, "check"))


def test_empty_data_file_is_damage_not_a_new_store(store: Path) -> None:
    os.truncate(store / "data.mdb", 0)
    assert_refused(store, "empty (0 bytes)")
    code, err = engine(store, "run", "exp.toml")
    assert code == 2 and "empty" in err
    assert (store / "data.mdb").stat().st_size == 0  # nothing was written over it


@pytest.mark.parametrize("meta", [0, 1])
def test_zeroed_meta_page_is_refused(store: Path, meta: int) -> None:
    page_size, _ = tree_pages(store)
    zero_pages(store, [meta], page_size)
    assert_refused(store, f"meta page {meta}")


@pytest.mark.parametrize("database", ["", "events", "runs"])
def test_zeroed_tree_page_is_refused_not_an_abort(store: Path, database: str) -> None:
    page_size, trees = tree_pages(store)
    zero_pages(store, [trees[database][-1]], page_size)  # a leaf (the walk goes root first)
    if database == "":
        assert_refused(store, "not a tree page")
        return
    # a command walks the pages of the databases it reads: list, status and report read the
    # snapshots and the stored report, not the events or their index; replay and export read them
    assert_refused(store, "not a tree page", commands=("replay", "export"))
    assert engine(store, "list")[0] == 0


def test_flipped_bytes_in_an_event_are_damage(store: Path) -> None:
    data = bytearray((store / "data.mdb").read_bytes())
    name = data.find(b"\xa6damage")  # the experiment's name, a msgpack string inside its events
    assert name > 0
    data[name + 1] = 0xFF  # no longer UTF-8: the record's checksum finds it before the decoder does
    (store / "data.mdb").write_bytes(bytes(data))
    # `status` reads the run's kept snapshots, not its early events: replay and check read them all
    assert_refused(store, "checksum mismatch", commands=("replay", "check"))


def test_flipped_bytes_in_the_run_index_are_damage(store: Path) -> None:
    data = (store / "data.mdb").read_bytes()
    assert data.count(b"r1\x00") > 0
    (store / "data.mdb").write_bytes(data.replace(b"r1\x00", b"\xff1\x00"))
    # list and status read the kept snapshots, not the run index; replay reads it
    assert_refused(store, "UnicodeDecodeError", commands=("replay",))


def test_an_edited_blob_is_damage(store: Path) -> None:
    with open_event_log(store, readonly=True) as log:
        # a blob stored as is (a compressed one would fail to decompress before its hash is checked)
        key = next(k for k, v in log_blobs(log) if v[:1] == b"\x00")
        stored = log.get_blob(key)
    assert stored is not None
    data = (store / "data.mdb").read_bytes()
    assert stored in data
    edited = stored[:-1] + bytes([stored[-1] ^ 0x20])
    # every copy: a freed page may still hold an old one
    (store / "data.mdb").write_bytes(data.replace(stored, edited))
    code, err = engine(store, "check")
    assert code == 2 and "does not match its content hash" in err, err


def log_blobs(log: EventLog) -> Iterator[tuple[str, bytes]]:
    with log._env.begin(db=log.blobs_db) as txn:
        for key, value in txn.cursor():
            yield key.decode(), bytes(value)


def test_a_newer_store_format_is_refused(store: Path) -> None:
    env = lmdb.open(str(store), max_dbs=8)
    with env.begin(write=True, db=env.open_db(b"meta")) as txn:
        txn.put(b"layout", b"9")
    env.close()
    code, err = engine(store, "list")
    assert code == 2 and "format version '9'" in err, err


def make_read_only(store: Path) -> str:
    for path in (*store.iterdir(), store):
        path.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH | (stat.S_IXUSR if path.is_dir() else 0))
    return hashlib.sha256((store / "data.mdb").read_bytes()).hexdigest()


@pytest.mark.parametrize("forced", ["1", ""], ids=["ENGINE_STORE_READONLY", "chmod-only"])
def test_a_read_only_store_is_readable(store: Path, forced: str) -> None:
    if not forced and os.geteuid() == 0:
        pytest.skip("root writes through chmod: the ENGINE_STORE_READONLY case covers it")
    digest = make_read_only(store)
    for command in (*READERS, "check"):
        code, err = engine(store, command, ENGINE_STORE_READONLY=forced)
        assert code == 0, (command, err)
    code, err = engine(store, "run", "exp.toml", "--run-id", "r2", ENGINE_STORE_READONLY=forced)
    assert code == 2 and "read-only" in err and len(err.strip().splitlines()) == 1, err
    assert hashlib.sha256((store / "data.mdb").read_bytes()).hexdigest() == digest


def test_check_passes_a_clean_store_and_one_run(store: Path) -> None:
    code, _ = engine(store, "check")
    done = run_engine("check", "r1", "--store", str(store), cwd=store.parent)
    assert code == 0 and done.returncode == 0
    assert b"run r1: ok" in done.stdout and b"events" in done.stdout


def test_backup_is_a_checked_copy_and_refuses_a_non_empty_destination(store: Path) -> None:
    digest = make_read_only(store)  # a backup only reads (and works from a read-only store)
    dest = store.parent / "copy"
    code, err = engine(store, "backup", str(dest), ENGINE_STORE_READONLY="1")
    assert code == 0, err
    assert engine(dest, "check")[0] == 0
    ours = run_engine("report", "r1", "--json", "--store", str(store), cwd=store.parent)
    theirs = run_engine("report", "r1", "--json", "--store", str(dest), cwd=store.parent)
    assert ours.returncode == 0 and ours.stdout == theirs.stdout
    code, err = engine(store, "backup", str(dest))
    assert code == 2 and "not an empty folder" in err and len(err.strip().splitlines()) == 1
    assert hashlib.sha256((store / "data.mdb").read_bytes()).hexdigest() == digest


def test_a_full_store_says_what_was_committed_and_resumes(tmp_path: Path) -> None:
    (tmp_path / "exp.toml").write_text(EXPERIMENT)
    store = tmp_path / "st"
    code, err = engine(store, "run", "exp.toml", "--run-id", "full", "-q", ENGINE_STORE_MAX_SIZE="131072")
    with open_event_log(store, readonly=True) as log:
        committed = len(log.run_index("full"))
    assert code == 1, err
    line = f"error: disk full: {committed} events committed, resume with engine run --resume full"
    assert line in err and err.count("error:") == 1
    assert 0 < committed
    code, err = engine(store, "run", "--resume", "full", "-q")
    assert code == 0, err
    assert engine(store, "check")[0] == 0


def test_resuming_a_run_with_a_damaged_event_is_refused(store: Path) -> None:
    data = (store / "data.mdb").read_bytes()
    name = data.find(b"\xa6damage")
    (store / "data.mdb").write_bytes(data[: name + 1] + b"\xff" + data[name + 2 :])
    for args in (("run", "--resume", "r1"), ("run", "exp.toml", "--run-id", "r1")):
        code, err = engine(store, *args)
        assert code == 2 and len(err.strip().splitlines()) == 1, err
        assert "store damaged" in err and "checksum mismatch" in err, err


@pytest.mark.parametrize("seed", range(8))
def test_random_flipped_bytes_never_crash(store: Path, seed: int) -> None:
    """Bytes flipped anywhere past the meta pages: a clean answer or one line, never a signal."""
    data = bytearray((store / "data.mdb").read_bytes())
    chooser = random.Random(seed)
    for _ in range(20):
        data[chooser.randrange(8192, len(data))] ^= 1 << chooser.randrange(8)
    (store / "data.mdb").write_bytes(bytes(data))
    # (replay and the other folds are left out: a flip can turn a figure into a poison value, which
    # the fold must survive: another test's subject)
    for command in ("check", "list"):
        code, err = engine(store, command)  # (engine() asserts there is no traceback)
        assert code in (0, 2), (command, code, err)  # a SIGBUS or an abort is a negative code
        assert code == 0 or "store damaged" in err.strip().splitlines()[-1], (command, err)


def limit_file_size() -> None:
    """In the child: files may not grow past 128 KiB (writes past it fail, as on a full device)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (131072, 131072))


def test_a_failed_write_says_what_was_committed_and_resumes(tmp_path: Path) -> None:
    (tmp_path / "exp.toml").write_text(EXPERIMENT)
    done = subprocess.run(
        engine_cmd("run", "exp.toml", "--run-id", "io", "-q", "--store", "st"),
        cwd=tmp_path, env=engine_env(), capture_output=True, timeout=300, preexec_fn=limit_file_size,
    )  # fmt: skip
    err = done.stderr.decode()
    assert done.returncode == 1 and "Traceback" not in err, err
    with open_event_log(tmp_path / "st", readonly=True) as log:
        committed = len(log.run_index("io"))
    assert f"{committed} events committed, resume with engine run --resume io" in err, err
    assert err.count("error:") == 1 and 0 < committed
    code, err = engine(tmp_path / "st", "run", "--resume", "io", "-q")
    assert code == 0, err
    assert engine(tmp_path / "st", "check")[0] == 0


def test_a_missing_header_record_is_damage_and_an_unknown_run_is_named(store: Path) -> None:
    assert engine(store, "check", "nope")[0] == 2
    env = lmdb.open(str(store), max_dbs=8)
    with env.begin(write=True, db=env.open_db(b"meta")) as txn:
        txn.delete(b"layout")
    env.close()
    code, err = engine(store, "list")
    assert code == 2 and "header record" in err and len(err.strip().splitlines()) == 1, err
