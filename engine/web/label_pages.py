"""The labelling pages: the queue (/runs/R/labels), the label panel of the trial page and the run
page's section, from their templates (autoescaped); static/labels.js does the labelling and the keyboard."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from engine.events.codec import to_builtins
from engine.store.projections.label_agreement import label_agreement
from engine.store.projections.labels import LabelState
from engine.web.context import WebContext
from engine.web.html import page
from engine.web.json_api import _known, in_thread
from engine.web.label_queue import next_unlabelled
from engine.web.labelling import READ_ONLY, queue_of, trial_url
from engine.web.templated import body as templated

QUEUE_SHOWN = 500
KEYS = "keys: p pass · f fail (then the next unlabelled trial) · n next unlabelled · j/k move · / note"


def _section(state: LabelState) -> dict[str, Any]:
    return to_builtins(label_agreement(state))


def queue_body(ctx: WebContext, run_id: str, root: str) -> tuple[str, str]:
    state, items = queue_of(ctx, run_id)
    rows = [
        {
            "url": trial_url(root, run_id, i), "variant": i.variant, "case": i.case, "repeat": i.repeat,
            "judges": ", ".join(f"{n}: {_verdict(v)}" for n, v in i.verdicts.items()) or "-",
            "label": i.label, "reasons": i.reasons,
        }
        for i in items[:QUEUE_SHOWN]
    ]  # fmt: skip
    found = next_unlabelled(items)
    html = templated(
        "labels_page.html", run_id=run_id, root=root, read_only="" if ctx.can_label else READ_ONLY,
        section=_section(state), count=len(items), items=rows,
        start=trial_url(root, run_id, found) if found else "",
    )  # fmt: skip
    return f"labels {run_id}", html


def _verdict(value: bool | None) -> str:
    return "-" if value is None else "pass" if value else "fail"


def label_panel(ctx: WebContext, run_id: str, case: str, trials: list[dict[str, Any]], root: str) -> str:
    """Pass / fail buttons and a note for each shown repeat of the case (when the view can label)."""
    state, items = queue_of(ctx, run_id)
    rows = []
    for t in trials:
        key = (t["variant"], case, t["repeat"] - 1)
        if key in state.outputs:
            label = state.label_of(key)
            verdict = label.verdict if label else ""
            rows.append({"variant": t["variant"], "repeat": t["repeat"], "verdict": verdict})
    if not rows:
        return ""
    shown = frozenset((t["variant"], case, t["repeat"] - 1) for t in trials)
    found = next_unlabelled(items, shown)
    return templated(
        "label_panel.html", run_id=run_id, case=case, root=root, rows=rows, writable=ctx.can_label,
        next=trial_url(root, run_id, found) if found else "", keys=KEYS, read_only=READ_ONLY,
        section=_section(state),
    )  # fmt: skip


def run_section(labelled: bool, run_id: str, root: str) -> str:
    """The way to the labelling queue (the report's own section shows the judges against the labels)."""
    return templated("label_run_section.html", labelled=labelled, run_id=run_id, root=root)


async def queue_page(request: Request) -> HTMLResponse:
    run_id, root = request.path_params["run_id"], request.scope.get("root_path", "")
    title, body = await in_thread(request, lambda ctx: queue_body(ctx, _known(ctx, run_id), root))
    return HTMLResponse(page(request, title, body))


PAGE_ROUTES = [Route("/runs/{run_id}/labels", queue_page)]
