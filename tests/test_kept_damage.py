"""A damaged kept record (a projection snapshot, a trial-index chunk, a reuse-index entry) is never
read: readers fold the log instead. `engine check` now says so, and `engine rebuild` mends it."""

from __future__ import annotations

import json
from pathlib import Path

import lmdb
import pytest

from tests.conftest import run_engine

QUICKSTART = Path(__file__).parent.parent / "examples" / "quickstart.toml"


def flip_one(store: Path, db: bytes, prefix: bytes) -> bytes:
    """Change a byte in the middle of the first record under `prefix`, in place; its key."""
    env = lmdb.open(str(store), max_dbs=8)
    try:
        handle = env.open_db(db, create=False)
        with env.begin(write=True, db=handle) as txn:
            cursor = txn.cursor()
            assert cursor.set_range(prefix) and cursor.key().startswith(prefix)
            key, value = bytes(cursor.key()), bytearray(cursor.value())
            value[len(value) // 2] ^= 0x20
            txn.put(key, bytes(value))
        return key
    finally:
        env.close()


KEPT = [(b"snapshots", b"state\x00"), (b"index", b"tix\x00"), (b"snapshots", b"reuse\x00")]


@pytest.mark.parametrize(("db", "prefix"), KEPT)
def test_check_names_a_damaged_kept_record_and_rebuild_mends_it(
    tmp_path: Path, db: bytes, prefix: bytes
) -> None:
    (tmp_path / "exp.toml").write_text(QUICKSTART.read_text())
    ran = run_engine("run", "exp.toml", "--run-id", "q1", "-q", "--store", "st", cwd=tmp_path)
    assert ran.returncode in (0, 1), ran.stderr.decode()
    before = run_engine("report", "q1", "--json", "--store", "st", cwd=tmp_path).stdout
    assert run_engine("check", "--store", "st", cwd=tmp_path).returncode == 0
    flip_one(tmp_path / "st", db, prefix)
    checked = run_engine("check", "--store", "st", cwd=tmp_path)
    out = checked.stdout.decode() + checked.stderr.decode()
    assert checked.returncode == 2 and "kept record" in out and "engine rebuild" in out, out
    replayed = run_engine("replay", "q1", "--json", "--store", "st", cwd=tmp_path)
    assert json.loads(replayed.stdout) == json.loads(before)  # the log says the same: readers fold it
    assert run_engine("rebuild", "--store", "st", cwd=tmp_path).returncode == 0
    assert run_engine("check", "--store", "st", cwd=tmp_path).returncode == 0
