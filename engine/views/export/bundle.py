"""`engine export RUN --format bundle --out FILE`: the run's events, in order, and every blob they
refer to, as one checksummed file another store can import (store/bundle_format.py has the layout).

Blob references are found by walking each event's fields for content hashes that the store holds,
so an event kind added later travels without a change here.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from importlib.metadata import PackageNotFoundError, version

from engine.errors import UserError
from engine.input.bundle_files import open_location
from engine.runtime.run_status import summarize
from engine.store.blobs import read_blob
from engine.store.bundle_format import FORMAT, BlobRow, BundleHeader, EventRow, events_digest, write_bundle
from engine.store.contract import EventStore

_HASH = re.compile(rb"(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])")


def run_rows(log: EventStore, run_id: str) -> list[EventRow]:
    """The run's events with their sequence numbers and tags, in log order."""
    tags = dict(log.run_index(run_id))
    return [EventRow(seq, tags[seq], bytes(data)) for seq, data in log.read_run(run_id)]


def referenced_blobs(log: EventStore, rows: list[EventRow]) -> Iterator[BlobRow]:
    """Each blob an event names, once, as its plain bytes (checked against its hash as it is read).

    msgpack keeps strings as their UTF-8 bytes, so a content hash is found in the encoded event
    without decoding it; a 64-hex run that names no blob is skipped."""
    seen: set[bytes] = set()
    for row in rows:
        for found in _HASH.finditer(row.data):
            key = found.group()
            if key in seen:
                continue
            seen.add(key)
            name = key.decode()
            if log.get_blob(name) is not None:  # a 64-hex string that names no blob is not a reference
                yield BlobRow(name, read_blob(log, name))


def bundle_header(log: EventStore, run_id: str, rows: list[EventRow]) -> BundleHeader:
    summary = summarize(log, run_id)
    if summary.status == "running":
        raise UserError(
            f"run {run_id} is still running: export it when it ends (or `engine cancel {run_id}`)"
        )
    return BundleHeader(
        format=FORMAT,
        run_id=run_id,
        experiment=summary.experiment,
        status=summary.status,
        started_ts=summary.started_ts,
        exported_ts=time.time(),
        engine_version=_engine_version(),
        events_digest=events_digest((r.tag, r.data) for r in rows),
    )


def write(log: EventStore, run_id: str, out: str | os.PathLike[str]) -> int:
    """Write the bundle; returns the number of events it holds."""
    rows = run_rows(log, run_id)
    header = bundle_header(log, run_id, rows)
    with open_location(out, "wb", "--out") as handle:
        write_bundle(handle, header, rows, referenced_blobs(log, rows))
    return len(rows)


def _engine_version() -> str:
    try:
        return version("engine")
    except PackageNotFoundError:
        return ""
