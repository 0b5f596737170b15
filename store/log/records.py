"""How one event is stored: a checksummed record, so bytes changed on disk are found on every read.

A record is the event's msgpack bytes followed by their CRC-32C (4 bytes, little-endian). A CRC run
over a whole record then always gives the same residue (0x48674BC7), so verifying is one checksum call
over the stored bytes, with no unpacking. Every record carries its own checksum rather than one per
batch: the run index reads single events, and each one can be verified alone.

Logs written before checksums hold bare msgpack records. The store's `meta` db names the first
sequence number written with checksums (`checked_from`): from there on every record is checksummed,
before it every record is bare and reads as it always did.

CRC-32C (Castagnoli, the iSCSI/ext4/Kafka checksum) detects every error of 1 to 3 bits in records up
to ~2^31 bits and every burst of up to 32 bits: what bit rot and torn sectors do. It comes from
`google-crc32c` (Google's maintained C extension: half the cost per call of the standard library's
CRC-32 on event-sized records, see benchmarks/bench_checksum.py).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

from google_crc32c import value as crc32c

from engine.events.errors import EngineError

RESIDUE = 0x48674BC7  # crc32c(data + crc32c(data) as 4 little-endian bytes), for any data
TRAILER = 4
CHECKED_FROM_KEY = b"checked_from"


class RecordDamaged(EngineError):
    """A stored record that is not what was written (the log turns it into StoreDamagedError, exit 2)."""


def seal(payload: bytes) -> bytes:
    return payload + crc32c(payload).to_bytes(4, "little")


def is_sealed(seq: int, checked_from: int | None) -> bool:
    return checked_from is not None and seq >= checked_from


def unseal(seq: int, record: bytes, checked_from: int | None) -> bytes:
    """The payload of a stored record, verified; RecordDamaged says what is wrong."""
    if not is_sealed(seq, checked_from):
        return record
    if crc32c(record) != RESIDUE:
        raise RecordDamaged(f"event {seq}: checksum mismatch (its bytes changed on disk)")
    return record[:-TRAILER]


def unseal_run(first: int, records: list[bytes], checked_from: int | None) -> Iterator[tuple[int, bytes]]:
    """Consecutive records from sequence number `first` on, all verified before the first is given;
    their payloads are cut out one at a time as they are consumed (a replay decodes each and drops
    it: the allocator reuses the memory, which a list of all of them would not let it do)."""
    if checked_from is None or first + len(records) <= checked_from:
        return enumerate(records, first)
    if first < checked_from:  # a chunk straddling the upgrade of an old store: one at a time
        return iter([(seq, unseal(seq, record, checked_from)) for seq, record in enumerate(records, first)])
    if set(map(crc32c, records)) - {RESIDUE}:  # the common case, all sound, in one pass in C
        bad = next(seq for seq, record in enumerate(records, first) if crc32c(record) != RESIDUE)
        raise RecordDamaged(f"event {bad}: checksum mismatch (its bytes changed on disk)")
    return ((seq, record[:-TRAILER]) for seq, record in enumerate(records, first))


def unseal_many(
    seqs: list[int], records: list[bytes], checked_from: int | None
) -> Iterator[tuple[int, bytes]]:
    """Records at these (rising) sequence numbers, verified as `unseal_run` does."""
    if not seqs or not is_sealed(seqs[0], checked_from):
        return iter(
            [(seq, unseal(seq, record, checked_from)) for seq, record in zip(seqs, records, strict=True)]
        )
    if set(map(crc32c, records)) - {RESIDUE}:
        bad = next(seq for seq, record in zip(seqs, records, strict=True) if crc32c(record) != RESIDUE)
        raise RecordDamaged(f"event {bad}: checksum mismatch (its bytes changed on disk)")
    return ((seq, record[:-TRAILER]) for seq, record in zip(seqs, records, strict=True))


def pack_seq(seq: int) -> bytes:
    return struct.pack(">Q", seq)


def unpack_seq(data: bytes | None) -> int | None:
    return None if data is None or len(data) != 8 else struct.unpack(">Q", data)[0]
