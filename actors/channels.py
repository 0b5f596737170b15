"""Sending on (and taking from) a memory channel without a turn of the scheduler when it can.

trio's `send` always yields after handing the item over (a task switch: benchmarks/README.md#in-code-trials).
A worker that sends two or three messages per trial and then waits on the network (a checkpoint of its own)
need not yield at each one: `put` hands the item over at once when the buffer has room, and waits like
`send` only when it is full. Like `send`, it raises Cancelled before sending in a cancelled scope.
`take` is the same for `receive` (which yields even when an item is waiting): a worker that takes
its next job and goes on to the network yields there.
"""

from __future__ import annotations

from typing import TypeVar

import trio

T = TypeVar("T")


async def put(channel: trio.MemorySendChannel[T], item: T) -> None:
    await trio.lowlevel.checkpoint_if_cancelled()
    try:
        channel.send_nowait(item)
    except trio.WouldBlock:
        await channel.send(item)


async def take(channel: trio.MemoryReceiveChannel[T]) -> T | None:
    """The next item, or None once the channel is closed and drained."""
    await trio.lowlevel.checkpoint_if_cancelled()
    try:
        return channel.receive_nowait()
    except trio.WouldBlock:
        pass
    except trio.EndOfChannel:
        return None
    try:
        return await channel.receive()
    except trio.EndOfChannel:
        return None
