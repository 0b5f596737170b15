"""A big state's snapshot packed in pieces: the bytes of encoding it whole, never all at once.

A run's report state holds a cell per variant x case (200,000 at 100,000 cases x 2 variants), and
encoding it whole made a packed copy of ~27 MiB beside the state at every save, before compression
(benchmarks/README.md, "One report state per live run"). Here the state (a dataclass, encoded by
msgspec as a map of its fields in their order) is encoded field by field, and its big field (a dict)
a few thousand entries at a time; the compressor takes each piece as it comes. The pieces are the
whole encoding's bytes (msgpack concatenates a map's entries after its header; a test holds them
equal), so a snapshot reads the same whichever way it was written.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterator
from typing import Any

CHUNK = 4096  # entries of the big field encoded at a time


def map_header(count: int) -> bytes:
    """msgpack's header of a map of `count` entries (its three forms: fixmap, map 16, map 32)."""
    if count < 16:
        return bytes([0x80 | count])
    if count < 1 << 16:
        return b"\xde" + count.to_bytes(2, "big")
    return b"\xdf" + count.to_bytes(4, "big")


def structs_of(mapping: Any) -> Iterator[tuple[Any, Any]]:
    """A mapping's entries as they are encoded: a mapping that keeps its values in another form (a
    state's cells as columns: store.projections.cell_table) gives them as structs."""
    return iter(getattr(mapping, "structs", mapping.items)())


def packed_pieces(
    encode: Callable[[Any], bytes], head: tuple[Any, ...], state: Any, field: str, chunk: int = CHUNK
) -> Iterator[bytes | memoryview]:
    """The msgpack of `(*head, state)`, in pieces; `state` a dataclass whose `field` is a dict."""
    yield bytes([0x90 | (len(head) + 1)]) + b"".join(encode(item) for item in head)  # a fixarray
    names = [f.name for f in dataclasses.fields(state)]
    yield map_header(len(names))
    for name in names:
        value = getattr(state, name)
        if name != field:
            yield encode(name) + encode(value)
            continue
        yield encode(name) + map_header(len(value))
        entries = structs_of(value)
        while part := dict(itertools.islice(entries, chunk)):
            packed = encode(part)
            yield memoryview(packed)[len(map_header(len(part))) :]  # its entries, without their header
