"""How the kept trial index is stored: per run a head, a catalogue and chunks of rows, each sealed.

Keys (in the snapshots database, beside the other kept projections):
- `tix NUL run`             head: [version, seq, rows, variant names, case names]
- `tix NUL run NUL m`       catalogue: the spec, the variants, the grading rounds (saved when changed)
- `tix NUL run NUL c` + u32 a chunk's columns: what the matrix and the trials API filter on
- `tix NUL run NUL r` + u32 a chunk's full trial records: read only for the trials a page describes
- `tix NUL run NUL t` + u32 a chunk's texts: outputs and grader reasons, read only by a text search
- `tix NUL run NUL l` + u32 the chunk's outputs lowered, joined: what a substring search scans

A row's place is the order its trial first appeared in the log, so a chunk fills and then only
changes when a late event (a grade, a regrade) touches one of its rows: the writer re-encodes the
chunks that changed, never the whole run. Every record carries the index's version (its own number
and a fingerprint of the types it holds): another version is rebuilt from the log, never misread.
"""

from __future__ import annotations

import math
import struct
import zlib
from dataclasses import dataclass, field
from typing import Any

import msgspec

from engine.events.spec import ExperimentSpec, VariantSpec
from engine.store.kept.codec import fingerprint
from engine.store.log.kept_io import INDEX_PREFIX
from engine.store.log.records import RESIDUE, TRAILER, crc32c, seal
from engine.store.projections.trials import TrialRecord

CHUNK = 256  # rows per chunk: a save re-encodes the chunks that changed, so small ones cost less
NUMBER = 1  # raised by hand when what a row means changes
_U32 = struct.Struct(">I")
# flags of a row
COMPLETED, FAILED, SKIPPED, GRADED, PASSED, SCORED = 1, 2, 4, 8, 16, 32


@dataclass(slots=True)
class Catalogue:
    """What the run's pages need besides its rows: its spec, variants and grading rounds."""

    experiment: str = ""
    source: str = ""
    seed: int = 0
    grading: int = 0
    spec: ExperimentSpec | None = None
    variants: dict[str, VariantSpec] = field(default_factory=dict)  # the spec's, then proposed ones
    proposed: dict[str, VariantSpec] = field(default_factory=dict)  # RunTrials.variants
    variant_order: dict[str, int] = field(default_factory=dict)
    rounds: dict[int, str] = field(default_factory=lambda: {0: "original"})


class Head(msgspec.Struct, array_like=True):
    version: str
    seq: int
    rows: int
    chunk: int  # rows per chunk (CHUNK when it was written)
    variants: list[str]
    cases: list[str]


class Columns(msgspec.Struct, array_like=True):
    """A chunk's rows, column by column (numbers as packed arrays: they decode as one copy)."""

    variant: bytes  # u16 index into the head's variant names
    case: bytes  # u32 index into the head's case names
    repeat: bytes  # u32
    flags: bytes  # u8, the bits above
    score: bytes  # f64 (0 where not SCORED)
    latency: bytes  # f64
    cost: bytes  # f64
    output_hash: bytes  # each row's, `hash_width` bytes padded with NULs (none: all NULs)
    hash_width: int
    # text columns most rows leave empty: row in the chunk -> text
    error_class: dict[int, str]
    error_kind: dict[int, str]
    grading_error: dict[int, str]  # the first grader's error class
    message: dict[int, str]
    ttft: bytes = b""  # f64, NaN where the trial streamed no answer

    def hash(self, i: int) -> str:
        w = self.hash_width
        return self.output_hash[i * w : (i + 1) * w].rstrip(b"\0").decode()


class Texts(msgspec.Struct, array_like=True):
    """A chunk's outputs ("" for a trial with none) joined, each row's from starts[i] to starts[i + 1]
    (u32 offsets in characters), and its graders' reasons (rows that have any)."""

    outputs: str
    starts: bytes
    reasons: dict[int, list[str]]

    def split(self) -> list[str]:
        from array import array

        at, text = array("I", self.starts), self.outputs
        return [text[at[i] : at[i + 1]] for i in range(len(at) - 1)]


class Lowered(msgspec.Struct, array_like=True):
    """The outputs each lowered on its own (str.lower, as a search compares), UTF-8, joined by NUL,
    each row's from byte starts[i] (UTF-8 bytes: read as one copy, and a UTF-8 needle is found in
    them exactly where its characters are in the text)."""

    text: bytes
    starts: bytes


def _version() -> str:
    kinds = (TrialRecord, Catalogue, Head, Columns, Texts, Lowered)
    return f"{NUMBER}." + ".".join(f"{fingerprint(kind):08x}" for kind in kinds)


VERSION = _version()


def head_key(run_id: str) -> bytes:
    return INDEX_PREFIX + run_id.encode()


def part_key(run_id: str, part: bytes, chunk: int | None = None) -> bytes:
    return head_key(run_id) + b"\x00" + part + (b"" if chunk is None else _U32.pack(chunk))


RAW, ZLIB = b"r", b"z"  # what pages and searches read is left uncompressed: it decodes as a copy


def pack(value: Any, compress: bool = True) -> bytes:
    packed = msgspec.msgpack.encode(value)
    return seal(ZLIB + zlib.compress(packed, 1) if compress else RAW + packed)


def unpack(data: bytes | None, kind: Any) -> Any:
    """The record, or None when absent or damaged (then the index is rebuilt or read from the log)."""
    if data is None or crc32c(data) != RESIDUE:
        return None
    try:
        body = data[1:-TRAILER]
        return msgspec.msgpack.decode(zlib.decompress(body) if data[:1] == ZLIB else body, type=kind)
    except (msgspec.DecodeError, msgspec.ValidationError, zlib.error):
        return None


def flags_of(rec: TrialRecord) -> int:
    return (
        COMPLETED * rec.completed | FAILED * rec.failed | SKIPPED * rec.skipped | GRADED * rec.graded
        | PASSED * rec.passed | SCORED * (rec.score is not None)
    )  # fmt: skip


def columns_of(records: list[TrialRecord], variants: dict[str, int], cases: dict[str, int]) -> Columns:
    from array import array

    hashes = [r.output_hash.encode() for r in records]
    width = max(map(len, hashes), default=0)
    return Columns(
        variant=array("H", [variants[r.variant] for r in records]).tobytes(),
        case=array("I", [cases[r.case] for r in records]).tobytes(),
        repeat=array("I", [r.repeat for r in records]).tobytes(),
        flags=bytes(flags_of(r) for r in records),
        score=array("d", [r.score or 0.0 for r in records]).tobytes(),
        latency=array("d", [r.latency_ms for r in records]).tobytes(),
        cost=array("d", [r.cost_usd for r in records]).tobytes(),
        output_hash=b"".join(h.ljust(width, b"\0") for h in hashes),
        hash_width=width,
        error_class={i: r.error_class for i, r in enumerate(records) if r.error_class},
        error_kind={i: r.error_kind for i, r in enumerate(records) if r.error_kind},
        grading_error={
            i: e for i, r in enumerate(records) if (e := next((g.error for g in r.grades if g.error), ""))
        },
        message={i: r.message for i, r in enumerate(records) if r.message},
        ttft=array("d", [math.nan if r.ttft_ms is None else r.ttft_ms for r in records]).tobytes(),
    )


def texts_of(records: list[TrialRecord], outputs: list[str]) -> tuple[Texts, Lowered]:
    reasons = {i: said for i, r in enumerate(records) if (said := [g.reason for g in r.grades if g.reason])}
    lowered = [text.lower().encode("utf-8", "surrogatepass") for text in outputs]
    return (
        Texts("".join(outputs), _starts(outputs, 0), reasons),
        Lowered(b"\0".join(lowered), _starts(lowered, 1)),
    )


def _starts(texts: list[str] | list[bytes], gap: int) -> bytes:
    from array import array
    from itertools import accumulate

    return array("I", [0, *accumulate(len(text) + gap for text in texts)]).tobytes()
