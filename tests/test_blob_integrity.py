"""Blob bytes are checked against the hash that names them: edited outputs are damage, not data."""

from __future__ import annotations

from pathlib import Path

import lmdb
import pytest

from engine.events import kinds as k
from engine.store.blobs import pack_blob, read_blob
from engine.store.errors import StoreDamagedError
from engine.store.memory import MemoryStore
from engine.store.open import open_event_log
from engine.store.projection import run_events
from tests.conftest import run_engine
from tests.test_cli_run import experiment


def test_read_blob_refuses_bytes_that_do_not_match_their_key() -> None:
    store = MemoryStore()
    key, stored = pack_blob(b"Paris")
    _, other = pack_blob(b"Lyon!")
    store.append([], [(key, stored)])
    assert read_blob(store, key) == b"Paris"
    store.append([], [("f" * 64, other)])
    with pytest.raises(StoreDamagedError, match="does not match its content hash"):
        read_blob(store, "f" * 64)
    store.append([], [("e" * 64, b"\x01not zlib")])
    with pytest.raises(StoreDamagedError, match="does not decompress"):
        read_blob(store, "e" * 64)


def edit_outputs(store: Path) -> None:
    """Change the stored bytes in place, keeping their keys (what a stray edit or bit rot does)."""
    env = lmdb.open(str(store), max_dbs=8)
    blobs = env.open_db(b"blobs")
    with env.begin(write=True, db=blobs) as txn:
        for key, value in list(txn.cursor()):
            txn.put(key, value[:1] + b"EDITED " + value[1:])
    env.close()


def test_export_and_regrade_of_edited_outputs_exit_2_naming_the_damage(
    tmp_path: Path, write_experiment
) -> None:
    file = write_experiment(experiment(cases=3, repeats=1))
    assert run_engine("run", str(file), "-q", "--run-id", "r1", "--store", "st", cwd=tmp_path).returncode == 0
    assert run_engine("export", "r1", "--store", "st", cwd=tmp_path).returncode == 0
    edit_outputs(tmp_path / "st")
    (tmp_path / "strict.toml").write_text('[[graders]]\nkind = "exact"\nvalue = "City1"\n')
    for command in (["export", "r1"], ["regrade", "r1", "--graders", "strict.toml"]):
        done = run_engine(*command, "--store", "st", cwd=tmp_path)
        err = done.stderr.decode()
        assert done.returncode == 2 and "Traceback" not in err, err
        assert "store damaged" in err and "content hash" in err, err


def test_a_missing_output_is_damage_not_no_output(tmp_path: Path, write_experiment) -> None:
    file = write_experiment(experiment(cases=2, repeats=1))
    assert run_engine("run", str(file), "-q", "--run-id", "r1", "--store", "st", cwd=tmp_path).returncode == 0
    with open_event_log(tmp_path / "st") as log:
        outputs = [e.output_hash for e in run_events(log, "r1") if isinstance(e, k.TrialCompleted)]
    gone = outputs[0].encode()
    env = lmdb.open(str(tmp_path / "st"), max_dbs=8)
    with env.begin(write=True, db=env.open_db(b"blobs")) as txn:
        assert txn.delete(gone)
    env.close()
    for command in (["export", "r1"], ["check"]):
        done = run_engine(*command, "--store", "st", cwd=tmp_path)
        err = done.stderr.decode() + done.stdout.decode()
        assert done.returncode == 2 and "Traceback" not in err, err
        assert f"blob {gone.decode()[:16]} is missing" in err, err
