"""`engine check`: read everything in the store and say what is damaged.

Of a snapshot (a copy made in one read transaction, see `EventLog.check`). Structure first (LMDB's
own offline verifier walks every page, when this lmdb has it), then the log: every record matches
its checksum and decodes, and names the run its index row names, sequence numbers run 1..N with no
gap, every index row points at an event, every blob an event refers to is there, and every blob
matches its content hash; then every kept record matches its checksum.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

import lmdb

from engine.events.codec import decode
from engine.events.kinds import tag_of
from engine.store.blobs import blob_problem
from engine.store.log.check_index import RowsBySeq
from engine.store.log.guard import LAYOUT_KEY, LEGACY_LAYOUT
from engine.store.log.kept_io import COMPLETE, LAST, LISTED, UPTO
from engine.store.log.records import (
    CHECKED_FROM_KEY,
    RESIDUE,
    TRAILER,
    RecordDamaged,
    crc32c,
    unpack_seq,
    unseal,
)

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


def check_snapshot(path: Path, run_id: str | None, version: bytes) -> CheckReport:
    """Check a store at rest (a snapshot no process writes to)."""
    structure = structure_problems(path)
    if structure:
        return CheckReport(problems=[*structure, "records not read: the pages holding them are damaged"])
    env = lmdb.open(str(path), readonly=True, lock=False, max_dbs=8, readahead=False)
    try:
        with env.begin() as txn:
            if txn.stat()["entries"] == 0:
                return CheckReport()  # copied while being created: empty
        try:
            dbs = {
                name: env.open_db(name.encode(), create=False) for name in ("events", "runs", "blobs", "meta")
            }
        except lmdb.NotFoundError as exc:
            return CheckReport(problems=[f"a database is missing ({exc})"])
        for name in ("snapshots", "index"):  # the kept records: absent from older stores
            try:
                dbs[name] = env.open_db(name.encode(), create=False)
            except lmdb.NotFoundError:
                continue
        return check_log(env, dbs, run_id, version)
    finally:
        env.close()


def check_log(
    env: lmdb.Environment, dbs: dict[str, object], run_id: str | None, version: bytes
) -> CheckReport:
    report = CheckReport()
    with env.begin() as txn:
        checked_from = _check_header(txn, dbs["meta"], version, report)
        index = _check_index(txn, dbs["runs"], _last_seq(txn, dbs["events"]), run_id, report)
        _check_events(txn, dbs, index, run_id, checked_from, report)
        _check_blobs(txn, dbs["blobs"], report)
        for name in ("snapshots", "index"):
            if name in dbs:
                _check_kept(txn, dbs[name], report)
    return report


def _check_kept(txn: lmdb.Transaction, db: object, report: CheckReport) -> None:
    """Every kept record (snapshots, trial index, digests, the reuse index) is sealed: a changed one
    is never read (readers fold the log instead), but it is damage all the same, and said."""
    for key, value in txn.cursor(db=db):
        _findable(txn, db, key, "kept record", report)
        if key in (UPTO, COMPLETE) or key.startswith((LISTED, LAST)):
            continue  # the log's own list of runs (store.log.kept_io)
        if len(value) <= TRAILER or crc32c(value) != RESIDUE:
            shown = bytes(key).split(b"\x00")[0].decode(errors="replace")[:20]
            report.add(f"kept record {shown!r} is damaged: `engine rebuild` makes it again from the log")


def _check_header(txn: lmdb.Transaction, db: object, version: bytes, report: CheckReport) -> int | None:
    """Where checksums start, from the header records (their damage is listed)."""
    layout = txn.get(LAYOUT_KEY, db=db)
    checked_from = unpack_seq(txn.get(CHECKED_FROM_KEY, db=db))
    if layout not in (None, LEGACY_LAYOUT, version):
        report.add(f"the header record (store format version) reads {bytes(layout)[:16]!r}")
    if layout == version and checked_from is None:
        report.add("the record saying where checksums start is missing or damaged")
    return checked_from


def _last_seq(txn: lmdb.Transaction, db: object) -> int:
    cursor = txn.cursor(db=db)
    key = cursor.key() if cursor.last() else b""
    return _U64.unpack(key)[0] if len(key) == 8 else 0


def _check_index(
    txn: lmdb.Transaction, db: object, last: int, run_id: str | None, report: CheckReport
) -> RowsBySeq:
    """The run index by sequence number (one run's rows when run_id is given)."""
    index = RowsBySeq(last)
    for key, tag in txn.cursor(db=db):
        _findable(txn, db, key, "run index row", report)
        try:
            run, seq = key[:-9].decode(), _U64.unpack(key[-8:])[0]
            listed = index.listed(seq)
            if listed is not None:
                report.add(f"run index: {listed} and {run} both list event {seq}")
            if run_id is None or run == run_id:
                index.add(seq, run, tag.decode())
        except (UnicodeDecodeError, struct.error) as exc:
            report.add(f"run index row {bytes(key)[:40]!r}: {exc}")
    return index


def _check_events(
    txn: lmdb.Transaction,
    dbs: dict[str, object],
    index: RowsBySeq,
    run_id: str | None,
    checked_from: int | None,
    report: CheckReport,
) -> None:
    """Every event's record against its checksum and the run index; the blobs the events refer to
    are looked up as they come (a set of every reference held ~150 MiB on a 1M-trial store)."""
    db, missing = dbs["events"], set[str]()
    expected = 1
    for key, value in txn.cursor(db=db):
        seq = _U64.unpack(key)[0] if len(key) == 8 else -1
        _findable(txn, db, key, f"event {seq}", report)
        if seq != expected:
            report.add(f"event sequence: expected {expected}, found {seq} (a gap or a bad key)")
        expected = seq + 1
        if run_id is not None and index.listed(seq) is None:
            continue
        report.events += 1
        run, tag = index.pop(seq)
        try:
            event = decode(unseal(seq, value, checked_from))
        except RecordDamaged as exc:
            report.add(str(exc))
            continue
        except Exception as exc:  # whatever the bytes make the decoder raise is damage
            report.add(f"event {seq}: does not decode ({type(exc).__name__}: {exc})")
            continue
        report.runs.add(event.run_id)
        if (run, tag) != (event.run_id, tag_of(type(event))):
            report.add(f"event {seq}: the run index says {run}/{tag}, the event is {event.run_id}")
        for ref in blob_refs(event):
            if ref not in missing and txn.get(ref.encode(), db=dbs["blobs"]) is None:
                missing.add(ref)
                report.add(f"blob {ref[:16]} is missing (an event refers to it)")
    for seq, run, tag in index.remaining():
        report.add(f"run index: {run}/{tag} points at event {seq}, which is missing")


def blob_refs(event: object) -> list[str]:
    """The blobs an event refers to (stored in the same batch as the event: never legitimately missing)."""
    refs = [getattr(event, "output_hash", ""), getattr(event, "report_hash", "")]
    agent = getattr(event, "agent", None)
    if agent is not None:
        refs.extend((agent.stderr_hash, agent.transcript_hash, *agent.services.values()))
    return [ref for ref in refs if ref]


def _findable(txn: lmdb.Transaction, db: object, key: bytes, what: str, report: CheckReport) -> None:
    """A scan walks the leaves in order; a lookup descends through the branch pages' separator keys.
    A changed separator can hide a record from lookups (the run index's reads) but not from a scan."""
    if txn.get(key, db=db) is None:
        shown = what if what.startswith("event") else f"{what} {bytes(key)[:40]!r}"
        report.add(f"{shown}: found by a scan, not by a lookup (a damaged branch page)")


def _check_blobs(txn: lmdb.Transaction, db: object, report: CheckReport) -> None:
    for key, stored in txn.cursor(db=db):
        _findable(txn, db, key, "blob", report)
        report.blobs += 1
        try:
            problem = blob_problem(key.decode(), bytes(stored))
        except UnicodeDecodeError:
            problem = f"blob key {bytes(key)[:16].hex()} is not a hash"
        if problem is not None:
            report.add(problem)
