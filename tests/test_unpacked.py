"""Within one read a snapshot read twice is decompressed once; outside one nothing is kept, and bytes
that changed in between are never answered from what was kept."""

from __future__ import annotations

import zlib

import trio

from engine.store.kept.unpacked import unpack, unpacked_once

TRAILER = 4


def stored(text: bytes) -> bytes:
    return zlib.compress(text) + b"\x00" * TRAILER


def test_inside_a_read_the_same_bytes_are_decompressed_once() -> None:
    data = stored(b"state " * 1000)
    with unpacked_once():
        first = unpack(data, TRAILER)
        assert unpack(bytes(bytearray(data)), TRAILER) is first  # equal bytes, another object
        assert unpack(stored(b"changed"), TRAILER) == b"changed"  # other bytes: their own contents
    assert first == b"state " * 1000


def test_outside_a_read_nothing_is_kept() -> None:
    data = stored(b"state " * 1000)
    assert unpack(data, TRAILER) is not unpack(data, TRAILER)
    with unpacked_once():
        unpack(data, TRAILER)
    assert unpack(data, TRAILER) is not unpack(data, TRAILER)  # the block's bytes went with it


async def test_each_worker_thread_keeps_its_own() -> None:
    data = stored(b"state " * 1000)

    def read_twice() -> bool:
        with unpacked_once():
            return unpack(data, TRAILER) is unpack(data, TRAILER)

    with unpacked_once():
        mine = unpack(data, TRAILER)
        assert await trio.to_thread.run_sync(read_twice)
        assert unpack(data, TRAILER) is mine
