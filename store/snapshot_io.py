"""The LMDB side of projection snapshots: their database, read and written inside a transaction."""

from __future__ import annotations

import struct
from collections.abc import Iterator

import lmdb

from engine.store.records import unseal

_U64 = struct.Struct(">Q")


class TxnSnapshots:
    """What the snapshot keeper reads and writes, inside the log's write transaction."""

    def __init__(
        self, txn: lmdb.Transaction, dbs: tuple[object, object, object], checked_from: int | None
    ) -> None:
        self.txn = txn
        self.events_db, self.runs_db, self.snaps_db = dbs
        self.checked_from = checked_from

    def get(self, key: bytes) -> bytes | None:
        return self.txn.get(key, db=self.snaps_db)

    def put(self, key: bytes, value: bytes) -> None:
        self.txn.put(key, value, db=self.snaps_db)

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


def clear(txn: lmdb.Transaction, snaps_db: object) -> None:
    txn.drop(snaps_db, delete=False)
