"""`GET /api/runs/{run_id}/events`: the run's live progress as Server-Sent Events.

The stream sends summaries, never the events themselves: a `progress` event whose id is the last
log sequence number it covers, at most SUMMARIES_PER_S a second however fast the run appends (see
coalesce.py), so its bytes per second stay bounded. A page that wants more than progress (the run
page's tables and charts) re-fetches them when a summary says the run moved. A browser that
reconnects sends `Last-Event-ID` and gets a summary at once; `?after=SEQ` says which state the
page already shows. Other processes append to the log; LMDB has no change notification across
processes, so the stream looks for new events every POLL_S (a read of the log's last sequence
number: cheap), well inside the second an event may take to reach a page.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import anyio
import msgspec
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from engine.web.coalesce import coalesced
from engine.web.context import WebContext
from engine.web.json_api import _known, in_thread
from engine.web.progress import progress
from engine.web.query_params import accepts, int_param

POLL_S = 0.1
SUMMARIES_PER_S = 4
KEEPALIVE_S = 15.0


def progress_frame(ctx: WebContext, run_id: str) -> tuple[int, bytes]:
    """(the run's last sequence number folded, its progress as an SSE frame with that id)."""
    data = ctx.views.use(run_id, lambda v: progress(v, time.time()))
    seq = int(data["seq"])  # type: ignore[call-overload]
    return seq, b"id: %d\nevent: progress\ndata: %s\n\n" % (seq, msgspec.json.encode(data))


class Follower:
    """poll() for coalesced(): a progress frame when the run has moved past what was sent."""

    def __init__(self, ctx: WebContext, run_id: str, sent: int) -> None:
        self.ctx, self.run_id, self.sent = ctx, run_id, sent
        self.checked = -1  # the log's last sequence number when last looked: other runs move it too

    def read(self) -> bytes | None:
        last = self.ctx.log.last_seq()
        if last == self.checked:
            return None
        self.checked = last
        seq, frame = progress_frame(self.ctx, self.run_id)
        if seq <= self.sent:
            return None
        self.sent = seq
        return frame

    async def poll(self) -> bytes | None:
        return await anyio.to_thread.run_sync(self.read)


async def tail(ctx: WebContext, run_id: str, after: int) -> AsyncIterator[bytes]:
    seq, first = await anyio.to_thread.run_sync(progress_frame, ctx, run_id)
    yield b"retry: 1000\n\n" + first  # the state the page starts from
    follower = Follower(ctx, run_id, max(seq, after))
    async for frame in coalesced(follower.poll, 1 / SUMMARIES_PER_S, POLL_S, KEEPALIVE_S):
        yield frame


@accepts("after")
async def run_events(request: Request) -> Response:
    run_id = request.path_params["run_id"]
    after = int_param(request.headers.get("last-event-id") or request.query_params.get("after"), 0, "after")
    ctx = await in_thread(request, lambda c: (_known(c, run_id), c)[1])
    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(tail(ctx, run_id, after), media_type="text/event-stream", headers=headers)
