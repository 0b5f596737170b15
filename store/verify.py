"""`engine check`: read everything in the store and say what is damaged.

Structure first (LMDB's own offline verifier walks every page, when this lmdb has it), then the
log: every event decodes and names the run its index row names, sequence numbers run 1..N with no
gap, every index row points at an event, and every blob matches its content hash.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

import lmdb

from engine.events.codec import decode
from engine.events.kinds import tag_of
from engine.store.blobs import blob_problem

_U64 = struct.Struct(">Q")
SHOWN = 20  # problems listed by name; the rest are counted


@dataclass
class CheckReport:
    events: int = 0
    blobs: int = 0
    runs: set[str] = field(default_factory=set)
    problems: list[str] = field(default_factory=list)

    def add(self, problem: str) -> None:
        self.problems.append(problem)


def structure_problems(path: Path) -> list[str]:
    try:
        from lmdb.verify import VerifyError, verify
    except ImportError:  # an older lmdb: the page walk done at every open still ran
        return []
    try:
        return [f"pages: {p}" for p in verify(str(path))]
    except (VerifyError, OSError) as exc:
        return [f"pages: {exc}"]


def check_log(env: lmdb.Environment, dbs: dict[str, object], run_id: str | None) -> CheckReport:
    report = CheckReport()
    with env.begin() as txn:
        index = _check_index(txn, dbs["runs"], run_id, report)
        _check_events(txn, dbs["events"], index, run_id, report)
        _check_blobs(txn, dbs["blobs"], report)
    return report


def _check_index(txn: lmdb.Transaction, db: object, run_id: str | None, report: CheckReport) -> dict:
    """{seq: (run, tag)} from the run index (one run's rows when run_id is given)."""
    index: dict[int, tuple[str, str]] = {}
    for key, tag in txn.cursor(db=db):
        try:
            run, seq = key[:-9].decode(), _U64.unpack(key[-8:])[0]
            if run_id is None or run == run_id:
                index[seq] = (run, tag.decode())
        except (UnicodeDecodeError, struct.error) as exc:
            report.add(f"run index row {bytes(key)[:40]!r}: {exc}")
    return index


def _check_events(
    txn: lmdb.Transaction, db: object, index: dict, run_id: str | None, report: CheckReport
) -> None:
    expected = 1
    for key, value in txn.cursor(db=db):
        seq = _U64.unpack(key)[0] if len(key) == 8 else -1
        if seq != expected:
            report.add(f"event sequence: expected {expected}, found {seq} (a gap or a bad key)")
        expected = seq + 1
        if run_id is not None and seq not in index:
            continue
        report.events += 1
        run, tag = index.pop(seq, (None, None))
        try:
            event = decode(value)
        except Exception as exc:  # whatever the bytes make the decoder raise is damage
            report.add(f"event {seq}: does not decode ({type(exc).__name__}: {exc})")
            continue
        report.runs.add(event.run_id)
        if (run, tag) != (event.run_id, tag_of(type(event))):
            report.add(f"event {seq}: the run index says {run}/{tag}, the event is {event.run_id}")
    for seq, (run, tag) in sorted(index.items()):
        report.add(f"run index: {run}/{tag} points at event {seq}, which is missing")


def _check_blobs(txn: lmdb.Transaction, db: object, report: CheckReport) -> None:
    for key, stored in txn.cursor(db=db):
        report.blobs += 1
        try:
            problem = blob_problem(key.decode(), bytes(stored))
        except UnicodeDecodeError:
            problem = f"blob key {bytes(key)[:16].hex()} is not a hash"
        if problem is not None:
            report.add(problem)
