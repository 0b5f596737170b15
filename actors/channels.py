"""Sending on a memory channel without a turn of the scheduler when it has room.

trio's `send` always yields after handing the item over (about 7 us and a task switch). A worker that
sends two or three messages per trial and then waits on the network (a checkpoint of its own) need
not yield at each one: `put` hands the item over at once when the buffer has room, and waits like
`send` only when it is full. Like `send`, it raises Cancelled before sending in a cancelled scope.
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
