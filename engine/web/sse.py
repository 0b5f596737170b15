"""`GET /api/runs/{run_id}/events`: the run's log tail as Server-Sent Events.

Each event's SSE id is its log sequence number, so a browser that reconnects (it sends
`Last-Event-ID`) resumes exactly after the last event it saw; `?after=SEQ` starts a fresh stream
there (the pages start at the tail they rendered). After each batch a `progress` event (no id)
carries the run's progress. Other processes append to the log; LMDB has no change notification
across processes, so the stream looks for new events every POLL_S (a read of the run index: cheap),
well inside the one second an event may take to reach a page.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import AsyncIterator

import anyio
import msgspec
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from engine.events.codec import decode, to_json
from engine.events.kinds import TAG_BY_TYPE
from engine.web.context import WebContext
from engine.web.json_api import _known, in_thread
from engine.web.progress import progress
from engine.web.query_params import int_param

POLL_S = 0.1
KEEPALIVE_POLLS = 150  # a comment line every ~15 s of silence tells proxies and browsers we are alive
BATCH = 512


def read_after(ctx: WebContext, run_id: str, after: int) -> list[bytes]:
    """The SSE frames of the run's events after `after`, then a progress frame (none if no event)."""
    frames = []
    for seq, data in itertools.islice(ctx.log.read_run(run_id, after + 1), BATCH):
        event = decode(data)
        tag = TAG_BY_TYPE[type(event)].encode()
        frames.append(b"id: %d\nevent: %s\ndata: %s\n\n" % (seq, tag, to_json(event)))
    return [*frames, progress_frame(ctx, run_id)] if frames else []


def progress_frame(ctx: WebContext, run_id: str) -> bytes:
    data = ctx.views.use(run_id, lambda v: progress(v, time.time()))
    return b"event: progress\ndata: %s\n\n" % msgspec.json.encode(data)


async def tail(request: Request, ctx: WebContext, run_id: str, after: int) -> AsyncIterator[bytes]:
    yield b"retry: 1000\n\n" + progress_frame(ctx, run_id)
    idle = 0
    while True:
        frames = await anyio.to_thread.run_sync(read_after, ctx, run_id, after)
        if frames:
            idle = 0
            after = int(frames[-2].split(b"\n", 1)[0][4:])
            yield b"".join(frames)
            continue
        idle += 1
        if idle % KEEPALIVE_POLLS == 0:
            yield b": keep-alive\n\n"
        await anyio.sleep(POLL_S)


async def run_events(request: Request) -> Response:
    run_id = request.path_params["run_id"]
    after = int_param(request.headers.get("last-event-id") or request.query_params.get("after"), 0)
    ctx = await in_thread(request, lambda c: (_known(c, run_id), c)[1])
    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    stream = tail(request, ctx, run_id, after)
    return StreamingResponse(stream, media_type="text/event-stream", headers=headers)
