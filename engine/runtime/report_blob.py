"""A big report's stored blob made from its JSON in pieces: never the whole JSON at once.

A run of 200,000 cells reports a verdict and an identical-repeats record per cell: ~24 MB of JSON,
which the end of a run encoded whole, then hashed and compressed into the report's blob, beside the
report itself (the run's peak memory; benchmarks/README.md, "Live memory, round five"). Here the
report is encoded with each long list standing in as one marker string; the JSON around the markers
is taken as it is, and each list's records a few thousand at a time in their place; the hash and the
compressor take each piece as it comes (store.blobs.pack_pieces). The pieces are the bytes of
`to_json(report)` and the blob is `pack_blob`'s (tests/test_report_blob.py).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import msgspec

from engine.events.codec import to_json
from engine.events.report import RunReport
from engine.store.blobs import pack_blob, pack_pieces

LONG = ("scenarios", "identical_repeats")  # the report's lists of one record per cell
CHUNK = 4096  # records encoded at a time


def report_blob(report: RunReport) -> tuple[str, bytes]:
    """`pack_blob(to_json(report))`: (the JSON's key, the stored bytes)."""
    long = [name for name in LONG if len(getattr(report, name)) > CHUNK]
    if not long:
        return pack_blob(to_json(report))
    return pack_pieces(lambda: json_pieces(report, long))


def json_pieces(report: RunReport, names: list[str]) -> Iterator[bytes]:
    """The bytes of `to_json(report)`, in pieces: the lists `names` a chunk of records at a time."""
    marks = {name: to_json(f"\x00{name}:{uuid.uuid4().hex}\x00") for name in names}  # in no report
    frame = to_json(msgspec.structs.replace(report, **{name: [msgspec.Raw(m)] for name, m in marks.items()}))
    at = 0
    for start, name in sorted((frame.index(mark), name) for name, mark in marks.items()):
        yield frame[at:start]
        records = getattr(report, name)
        for first in range(0, len(records), CHUNK):
            encoded = to_json(records[first : first + CHUNK])[1:-1]  # the records, without [ and ]
            yield encoded if first == 0 else b"," + encoded
        at = start + len(marks[name])
    yield frame[at:]
