"""Checksummed records: what a new store writes, and logs from before checksums read as before."""

from __future__ import annotations

import struct
from pathlib import Path

import lmdb
import pytest

from engine.events.codec import decode, encode
from engine.store.errors import StoreDamagedError
from engine.store.log.records import unseal
from engine.store.open import open_event_log
from engine.store.projection import run_events
from tests.test_log import rows, skipped


def legacy_store(path: Path, events: list[bytes]) -> None:
    """A store as engines before checksums wrote it: layout "1", bare msgpack records."""
    env = lmdb.open(str(path), max_dbs=8)
    with env.begin(write=True) as txn:
        events_db, runs_db = env.open_db(b"events", txn=txn), env.open_db(b"runs", txn=txn)
        env.open_db(b"blobs", txn=txn)
        txn.put(b"layout", b"1", db=env.open_db(b"meta", txn=txn))
        for seq, data in enumerate(events, 1):
            txn.put(struct.pack(">Q", seq), data, db=events_db)
            txn.put(b"old\x00" + struct.pack(">Q", seq), b"trial.skipped", db=runs_db)
    env.close()


def raw_record(path: Path, seq: int) -> bytes:
    env = lmdb.open(str(path), max_dbs=8, readonly=True)
    with env.begin(db=env.open_db(b"events", create=False)) as txn:
        found = bytes(txn.get(struct.pack(">Q", seq)))
    env.close()
    return found


def put_record(path: Path, seq: int, data: bytes) -> None:
    env = lmdb.open(str(path), max_dbs=8)
    with env.begin(write=True, db=env.open_db(b"events")) as txn:
        txn.put(struct.pack(">Q", seq), data)
    env.close()


def test_a_new_store_seals_every_record(tmp_path: Path) -> None:
    with open_event_log(tmp_path) as log:
        log.append(rows(skipped("r", 3)))
        assert log.checked_from == 1
        assert [decode(data).case for _, data in log.read()] == ["c0", "c1", "c2"]
    stored, payload = raw_record(tmp_path, 2), encode(skipped("r", 1, start=1)[0])
    assert stored[: len(payload)] == payload and len(stored) == len(payload) + 4
    assert unseal(2, stored, 1) == payload


def test_a_log_from_before_checksums_reads_and_is_upgraded_when_written(tmp_path: Path) -> None:
    old = [encode(e) for e in skipped("old", 3)]
    legacy_store(tmp_path, old)
    with open_event_log(tmp_path, readonly=True) as log:
        assert log.checked_from is None and [data for _, data in log.read()] == old
        assert not log.check().problems
    with open_event_log(tmp_path) as log:  # opened to write: later records carry checksums
        assert log.checked_from == 4
        log.append(rows(skipped("new", 2)))
        assert [decode(data).run_id for _, data in log.read()] == ["old"] * 3 + ["new"] * 2
        assert [decode(data).case for _, data in log.read_run("old")] == ["c0", "c1", "c2"]
        report = log.check()
        assert not report.problems and report.events == 5
    assert raw_record(tmp_path, 1) == old[0] and raw_record(tmp_path, 4) != encode(skipped("new", 1)[0])


def test_a_bare_record_where_checksums_are_due_is_damage(tmp_path: Path) -> None:
    with open_event_log(tmp_path) as log:
        log.append(rows(skipped("r", 2)))
    put_record(tmp_path, 2, encode(skipped("r", 1)[0]))  # a valid event, but without its checksum
    with open_event_log(tmp_path, readonly=True) as log:
        with pytest.raises(StoreDamagedError, match="event 2: checksum mismatch"):
            list(log.read())
        with pytest.raises(StoreDamagedError, match="event 2: checksum mismatch"):
            list(log.read_run("r"))
        assert log.check().problems == ["event 2: checksum mismatch (its bytes changed on disk)"]


def test_a_changed_byte_fails_the_checksum_even_when_it_still_decodes(tmp_path: Path) -> None:
    with open_event_log(tmp_path) as log:
        log.append(rows(skipped("r", 1)))
    record = raw_record(tmp_path, 1)
    changed = record.replace(b"c0", b"c1")  # still a valid event: only the checksum can tell
    assert decode(changed[:-4]).case == "c1"
    put_record(tmp_path, 1, changed)
    with open_event_log(tmp_path, readonly=True) as log:
        with pytest.raises(StoreDamagedError, match="event 1: checksum mismatch"):
            list(log.read())
        assert any("event 1: checksum mismatch" in p for p in log.check().problems)


def test_a_run_index_row_pointing_at_another_runs_event_is_damage(tmp_path: Path) -> None:
    with open_event_log(tmp_path) as log:
        log.append(rows(skipped("a", 1) + skipped("b", 1)))
    env = lmdb.open(str(tmp_path), max_dbs=8)
    with env.begin(write=True, db=env.open_db(b"runs")) as txn:  # a's row now names b's event
        txn.delete(b"a\x00" + struct.pack(">Q", 1))
        txn.put(b"a\x00" + struct.pack(">Q", 2), b"trial.skipped")
    env.close()
    with open_event_log(tmp_path, readonly=True) as log:
        with pytest.raises(StoreDamagedError, match="run index: a lists event 2, which is b's"):
            list(run_events(log, "a"))
        assert "run index: a and b both list event 2" in log.check().problems
