"""At most one frame per `gap` seconds, whatever the rate of what it summarises.

A live run may append thousands of events a second; a page needs a few summaries a second. The
stream asks `poll()` for a summary of what changed since it last asked (None: nothing did), sends it,
then waits `gap` before asking again: everything appended meanwhile folds into the next summary. So
the stream's bytes per second are bounded by one summary's size over `gap`, not by the run's rate.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import anyio

KEEPALIVE = b": keep-alive\n\n"  # a comment line: proxies and browsers see the stream is alive


async def coalesced(
    poll: Callable[[], Awaitable[bytes | None]], gap: float, idle_poll: float, keepalive_s: float
) -> AsyncIterator[bytes]:
    """Frames from poll(), at most one per `gap`; a keep-alive after `keepalive_s` of silence."""
    quiet_since = anyio.current_time()
    while True:
        frame = await poll()
        now = anyio.current_time()
        if frame is not None:
            quiet_since = now
            yield frame
            await anyio.sleep(gap)
            continue
        if now - quiet_since >= keepalive_s:
            quiet_since = now
            yield KEEPALIVE
        await anyio.sleep(idle_poll)
