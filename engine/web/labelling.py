"""Labelling in the web view: the label API (the view's only write) and the figures the pages show.

Writes need `engine serve --token T`: without a token the view is read-only and the write route
refuses (403); with one, the token gate refuses any request without it (401) before this code runs.
A write must be JSON (a cross-site form cannot send that without the browser asking first).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode, urlsplit

import msgspec
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from engine.errors import InputError
from engine.events.codec import to_builtins
from engine.input.labels_file import LabelRow
from engine.runtime.label_record import record_labels
from engine.store.projections.label_agreement import label_agreement
from engine.store.projections.labels import LabelState, load_labels
from engine.web.context import WebContext
from engine.web.html import q
from engine.web.json_api import _known, in_thread, json_response
from engine.web.label_queue import QueueItem, label_queue, next_unlabelled
from engine.web.query_params import accepts

READ_ONLY = "this view is read-only: start `engine serve --token T` to label"
BODY_MAX = 16 * 1024  # a label and its note (capped at 4,000 characters) with room to spare


def cross_site(request: Request) -> str | None:
    """Why a write from another site is refused (None: same origin, or no browser's Origin at all).
    The token cookie is SameSite=Strict, but a bearer token pasted into another page is not: the
    browser's Origin header says where the request comes from, whatever it carries."""
    origin = request.headers.get("origin")
    fetch_site = request.headers.get("sec-fetch-site", "")
    same = origin is not None and urlsplit(origin).netloc.lower() == request.headers.get("host", "").lower()
    if fetch_site == "cross-site" or (origin is not None and not same):
        return f"refused: a write from another site ({(origin or fetch_site)[:80]!r})"
    return None


async def bounded_body(request: Request, limit: int) -> bytes | None:
    """The request's body, or None once it passes `limit` bytes (read no further)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


class WebLabel(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    case: str
    variant: str
    repeat: int
    verdict: str
    note: str = ""
    score: float | None = None


def trial_url(root: str, run_id: str, item: QueueItem) -> str:
    """The trial page with the repeat to label in focus (not escaped: escape it for HTML)."""
    query = urlencode({"case": item.case, "variant": item.variant, "repeat": item.repeat})
    return f"{root}/runs/{q(run_id)}/trial?{query}"


def queue_of(ctx: WebContext, run_id: str) -> tuple[LabelState, list[QueueItem]]:
    """The run's labels fold and queue, computed once per state of the log (every trial is read: a
    50,000-trial run takes about a second, so the trial pages of a quiet store share one)."""

    def compute() -> tuple[LabelState, list[QueueItem]]:
        state = load_labels(ctx.log, run_id)
        return state, label_queue(state)

    return ctx.memo(("label-queue", run_id), compute)


def labels_json(ctx: WebContext, run_id: str, root: str) -> dict[str, Any]:
    """The judges against the labels, and the queue's next unlabelled trial."""
    state, items = queue_of(ctx, run_id)
    found = next_unlabelled(items)
    return {
        "agreement": to_builtins(label_agreement(state)),
        "next": trial_url(root, run_id, found) if found else None,
        "can_label": ctx.can_label,
    }


@accepts()
async def get_labels(request: Request) -> Response:
    run_id, root = request.path_params["run_id"], request.scope.get("root_path", "")
    return json_response(await in_thread(request, lambda ctx: labels_json(ctx, _known(ctx, run_id), root)))


@accepts()
async def post_label(request: Request) -> Response:
    ctx: WebContext = request.app.state.ctx
    if not ctx.can_label:
        return JSONResponse({"error": READ_ONLY}, status_code=403)
    if (foreign := cross_site(request)) is not None:
        return JSONResponse({"error": foreign}, status_code=403)
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        expected = "expected a JSON body (content-type: application/json)"
        return JSONResponse({"error": expected}, status_code=415)
    body = await bounded_body(request, BODY_MAX)
    if body is None:
        return JSONResponse({"error": f"expected a label of at most {BODY_MAX // 1024} kB"}, status_code=413)
    try:
        given = msgspec.json.decode(body, type=WebLabel)
    except msgspec.ValidationError as exc:
        raise InputError("label", "", str(exc)) from None
    except msgspec.DecodeError as exc:
        raise InputError("label", "", f"expected a JSON object ({exc})") from None
    row = LabelRow(**msgspec.structs.asdict(given), by="web view")
    run_id, root = request.path_params["run_id"], request.scope.get("root_path", "")

    def write(ctx: WebContext) -> dict[str, Any]:
        rid = _known(ctx, run_id)
        record_labels(ctx.log, rid, [("label", row)])
        state, items = queue_of(ctx, rid)
        found = next_unlabelled(items)
        return {
            "recorded": 1,
            "agreement": to_builtins(label_agreement(state)),
            "next": trial_url(root, rid, found) if found else None,
        }

    return json_response(await in_thread(request, write))


API_ROUTES = [
    Route("/api/runs/{run_id}/labels", get_labels, methods=["GET"]),
    Route("/api/runs/{run_id}/labels", post_label, methods=["POST"]),
]
