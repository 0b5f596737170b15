"""The LMDB side of the kept records (projection snapshots, the trial index, report digests): their
databases, read and written inside the log's write transaction by the keepers it was handed
(store.log.keepers), and the log's own list of runs kept beside them (`note_runs`)."""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence

import lmdb

from engine.store.log.records import unseal

_U64 = struct.Struct(">Q")
# besides each projection's "name NUL run" records, the snapshots database keeps:
UPTO = b"upto"  # the id of the last transaction a writer that keeps snapshots committed
COMPLETE = b"complete"  # present when every run of the store is listed (a new store, or a rebuild)
LISTED = b"runs\x00"  # + the run's first sequence number (u64) -> run id: runs, oldest first
LAST = b"last\x00"  # + run id -> the run's last sequence number (u64)
# the trial index's records (store.trial_index_codec) live in a database of their own ("index"): the
# commands that read only the snapshots (list, status) never walk its pages, a few hundred bytes a trial
INDEX_PREFIX = b"tix\x00"


class TxnSnapshots:
    """What the snapshot keeper reads and writes, inside the log's write transaction."""

    def __init__(
        self, txn: lmdb.Transaction, dbs: tuple[object, object, object, object], checked_from: int | None,
        blobs_db: object | None = None,
    ) -> None:  # fmt: skip
        self.txn = txn
        self.events_db, self.runs_db, self.snaps_db, self.index_db = dbs
        self.checked_from = checked_from
        self.blobs_db = blobs_db

    def blob(self, key: str) -> bytes | None:
        """A blob as stored (the trial index keeps outputs' text for searches)."""
        return None if self.blobs_db is None else self.txn.get(key.encode(), db=self.blobs_db)

    def get(self, key: bytes) -> bytes | None:
        return self.txn.get(key, db=self._db_of(key))

    def put(self, key: bytes, value: bytes) -> None:
        self.txn.put(key, value, db=self._db_of(key))

    def _db_of(self, key: bytes) -> object:
        return self.index_db if key.startswith(INDEX_PREFIX) else self.snaps_db

    def note_run(self, run_id: str, first: int, last: int) -> None:
        """The run's last event is `last`; `first` (when not 0) is its first: a new run, listed."""
        self.txn.put(LAST + run_id.encode(), _U64.pack(last), db=self.snaps_db)
        if first:
            self.txn.put(LISTED + _U64.pack(first), run_id.encode(), db=self.snaps_db)

    def last_before(self, run_id: str, seq: int) -> int:
        prefix = run_id.encode() + b"\x00"
        cursor = self.txn.cursor(db=self.runs_db)
        found = cursor.set_range(prefix + _U64.pack(seq))
        if not (cursor.prev() if found else cursor.last()):
            return 0
        key = cursor.key()
        if not key.startswith(prefix) or len(key) != len(prefix) + 8:
            return 0
        return _U64.unpack(key[len(prefix) :])[0]

    def events(self, run_id: str, from_seq: int, tags: frozenset[str]) -> Iterator[tuple[int, bytes]]:
        prefix = run_id.encode() + b"\x00"
        cursor = self.txn.cursor(db=self.runs_db)
        if not cursor.set_range(prefix + _U64.pack(from_seq)):
            return
        for key, tag in cursor:
            if not key.startswith(prefix) or len(key) != len(prefix) + 8:
                return
            if tag.decode() in tags:
                seq = _U64.unpack(key[len(prefix) :])[0]
                yield seq, unseal(seq, self.txn.get(_U64.pack(seq), db=self.events_db), self.checked_from)


def note_runs(io: TxnSnapshots, batch: Sequence[tuple[str, str, bytes]], first: int) -> None:
    """List the batch's runs (a new one under its first event) and their last events: the log's
    `run_ids` and `last_of` read these, whichever keepers it has. Before the batch's rows are in."""
    ends: dict[str, list[int]] = {}
    for i, row in enumerate(batch):
        span = ends.get(row[0])
        if span is None:
            ends[row[0]] = [first + i, first + i]
        else:
            span[1] = first + i
    for run_id, (start, last) in ends.items():
        io.note_run(run_id, 0 if io.last_before(run_id, first) else start, last)


def clear(txn: lmdb.Transaction, snaps_db: object) -> None:
    txn.drop(snaps_db, delete=False)


def mark_written(txn: lmdb.Transaction, snaps_db: object | None) -> None:
    """Every commit of this writer says so: a reader whose transaction is this one knows that no
    writer that does not keep snapshots (an older engine) has appended since."""
    if snaps_db is not None:
        txn.put(UPTO, _U64.pack(txn.id()), db=snaps_db)


def fresh(txn: lmdb.Transaction, snaps_db: object | None) -> bool:
    return snaps_db is not None and txn.get(UPTO, db=snaps_db) == _U64.pack(txn.id())


def listed_runs(txn: lmdb.Transaction, snaps_db: object) -> list[str] | None:
    """Every run, oldest first, from the snapshots alone; None unless they list every run."""
    if not fresh(txn, snaps_db) or txn.get(COMPLETE, db=snaps_db) is None:
        return None
    cursor = txn.cursor(db=snaps_db)
    out: list[str] = []
    if cursor.set_range(LISTED):
        for key, value in cursor:
            if not key.startswith(LISTED):
                break
            out.append(value.decode())
    return out


def last_of(txn: lmdb.Transaction, snaps_db: object | None, run_id: str) -> int | None:
    """The run's last sequence number, when the snapshots know it for sure; else None."""
    if not fresh(txn, snaps_db):
        return None
    found = txn.get(LAST + run_id.encode(), db=snaps_db)
    return None if found is None else _U64.unpack(found)[0]
