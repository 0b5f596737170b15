"""What a reader of the run state's derived records must know of the run state: the version of its
kept snapshot (the number and the fingerprint of its types: store.kept.codec) and the event tags its
fold reads. Never pinned by hand: the writer, which folds the state, computes them from the state's
own definition and records them in the store beside the records it keeps (`source_record`); readers
(`engine status`, whether a stored report is current) read them there (`recorded_source`) without
importing the state's module, and trust a derived record only when its version names the recorded
one. A store no writer of today recorded it in reads as having no current record: readers fold."""

from __future__ import annotations

from typing import Any, NamedTuple

from engine.store.log.records import RESIDUE, TRAILER, crc32c, seal

SOURCE = b"source\x00"  # + the kept state's name -> its version and tags (in the snapshots database)


class StateSource(NamedTuple):
    """A kept state as its derived records see it (store.kept.read.Derived)."""

    name: str
    version: str  # as Snapshotted.version gives it: "number.fingerprint"
    tags: frozenset[str]  # the events that change it


def source_record(source: StateSource) -> tuple[bytes, bytes]:
    """The key and value that record `source` in the store: its version, then its tags, a line each
    (sorted: the same state records the same bytes in every process), checksummed."""
    text = "\n".join([source.version, *sorted(source.tags)])
    return SOURCE + source.name.encode(), seal(text.encode())


def recorded_source(log: Any, name: str) -> StateSource | None:
    """The state `name` as the store's writer last recorded it; None when none did (a store an older
    engine wrote, a store kept without keepers) or the record is damaged."""
    get = getattr(log, "get_snapshot", None)
    return source_of(name, get(SOURCE + name.encode()) if get is not None else None)


def source_of(name: str, data: bytes | None) -> StateSource | None:
    """The state `name` as recorded in `data` (see `source_record`); None: no record, or a damaged one."""
    if data is None or len(data) <= TRAILER or crc32c(data) != RESIDUE:
        return None
    try:
        version, *tags = bytes(data[:-TRAILER]).decode().split("\n")
    except UnicodeDecodeError:
        return None
    return StateSource(name, version, frozenset(tags))
