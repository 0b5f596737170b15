"""How one event is stored: a checksummed record, so bytes changed on disk are found on every read.

A record is a marker byte, the CRC-32 of the payload (4 bytes, big-endian), then the payload (the
event's msgpack bytes). The marker is 0xC1, the one byte msgpack never uses: an engine that predates
checksums refuses such a record instead of misreading it, and a flipped marker leaves bytes that are
not a record either. Every record carries its own checksum (rather than one per batch): the run index
reads single events, and each can be verified alone.

Logs written before checksums hold bare msgpack records. The store's `meta` db names the first
sequence number written with checksums (`checked_from`): from there on a bare record is damage,
before it a bare record is an old one and reads as it always did.

CRC-32 (zlib's, in the standard library) detects every error of 1 to 3 bits in records of up to
11 KB, and every burst of up to 32 bits in any record: what bit rot and torn sectors do. It costs
well under a microsecond per event (benchmarks/bench_checksum.py).
"""

from __future__ import annotations

import struct
import zlib

MARK = 0xC1
HEADER = 5
_CRC = struct.Struct(">I")
CHECKED_FROM_KEY = b"checked_from"


class RecordDamaged(Exception):
    """A stored record that is not what was written (the log turns it into StoreDamagedError)."""


def seal(payload: bytes) -> bytes:
    return b"\xc1" + _CRC.pack(zlib.crc32(payload)) + payload


def unseal(seq: int, record: bytes, checked_from: int | None) -> bytes:
    """The payload of a stored record, verified; RecordDamaged names what is wrong."""
    if record[:1] == b"\xc1":
        if len(record) < HEADER:
            raise RecordDamaged(f"event {seq}: record cut short ({len(record)} bytes)")
        payload = record[HEADER:]
        if zlib.crc32(payload) != _CRC.unpack_from(record, 1)[0]:
            raise RecordDamaged(f"event {seq}: checksum mismatch (its bytes changed on disk)")
        return payload
    if checked_from is not None and seq >= checked_from:
        raise RecordDamaged(f"event {seq}: no checksum where every record has one (its bytes changed)")
    return record


def pack_seq(seq: int) -> bytes:
    return struct.pack(">Q", seq)


def unpack_seq(data: bytes | None) -> int | None:
    return None if data is None or len(data) != 8 else struct.unpack(">Q", data)[0]
