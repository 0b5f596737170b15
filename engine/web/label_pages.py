"""The labelling pages: the queue (/runs/R/labels), the label panel of the trial page and the run
page's section, from their templates (autoescaped); static/labels.js does the labelling and the keyboard."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse
from starlette.routing import Route

from engine.events.codec import to_builtins
from engine.events.spec import ExperimentSpec
from engine.store.kept.snapshots import RUN_HEADS, load
from engine.store.projections.label_agreement import label_agreement
from engine.store.projections.labels import LabelState, declared_judges, load_labelled
from engine.web.context import WebContext
from engine.web.html import page, q
from engine.web.json_api import _known, in_thread
from engine.web.label_queue import next_unlabelled
from engine.web.labelling import READ_ONLY, queue_of, trial_url
from engine.web.templated import body as templated

QUEUE_SHOWN = 500
COMPLETED = frozenset({"pass", "fail", "ungraded", "grading_error"})  # a trial with an output to label
KEYS = ("keys: p pass · f fail (then the next unlabelled trial) · n next unlabelled · j/k move · / note"
        " · l this panel")


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


def label_panel(
    ctx: WebContext, run_id: str, case: str, variant: str, trials: list[dict[str, Any]], root: str,
    spec: ExperimentSpec | None = None,
) -> str:  # fmt: skip
    """Pass / fail buttons and a note for each shown repeat of the case (when the view can label). It
    reads the labelled trials only: the queue (every trial's verdicts) is read when `n` asks for it."""
    state = ctx.memo(("labelled", run_id), lambda: _labelled(ctx, run_id, spec))
    rows = []
    for t in trials:
        if t["status"] in COMPLETED:
            label = state.label_of((t["variant"], case, t["repeat"] - 1))
            verdict = label.verdict if label else ""
            rows.append({"variant": t["variant"], "repeat": t["repeat"], "verdict": verdict})
    if not rows:
        return ""
    asked = urlencode({"case": case, "variant": variant})
    return templated(
        "label_panel.html", run_id=run_id, case=case, root=root, rows=rows, writable=ctx.can_label,
        next=f"{root}/runs/{q(run_id)}/labels/next?{asked}", keys=KEYS, read_only=READ_ONLY,
        section=_section(state),
    )  # fmt: skip


def _labelled(ctx: WebContext, run_id: str, spec: ExperimentSpec | None) -> LabelState:
    """The run's labelled trials; none without a walk of its index when its kept heads say no label
    was ever recorded (most runs: the walk is most of a first trial page on a big run): then only
    the judges its definition names."""
    if not load(ctx.log, RUN_HEADS, run_id).labelled:
        return LabelState(judges=declared_judges(spec))
    return load_labelled(ctx.log, run_id)


def next_after(ctx: WebContext, run_id: str, case: str, variant: str, root: str) -> str:
    """The queue's first unlabelled trial but the trial page's own (its case, of its variant when the
    page names one); the queue itself when every trial is labelled."""
    _, items = queue_of(ctx, run_id)
    shown = frozenset(
        (i.variant, i.case, i.repeat - 1) for i in items if i.case == case and variant in ("", i.variant)
    )  # fmt: skip
    found = next_unlabelled(items, shown)
    return trial_url(root, run_id, found) if found else f"{root}/runs/{q(run_id)}/labels"


def run_section(labelled: bool, run_id: str, root: str) -> str:
    """The way to the labelling queue (the report's own section shows the judges against the labels)."""
    return templated("label_run_section.html", labelled=labelled, run_id=run_id, root=root)


async def queue_page(request: Request) -> HTMLResponse:
    run_id, root = request.path_params["run_id"], request.scope.get("root_path", "")
    title, body = await in_thread(request, lambda ctx: queue_body(ctx, _known(ctx, run_id), root))
    return HTMLResponse(page(request, title, body))


async def next_page(request: Request) -> RedirectResponse:
    run_id, root = request.path_params["run_id"], request.scope.get("root_path", "")
    case, variant = request.query_params.get("case", ""), request.query_params.get("variant", "")
    found = await in_thread(request, lambda ctx: next_after(ctx, _known(ctx, run_id), case, variant, root))
    return RedirectResponse(found, status_code=303)


PAGE_ROUTES = [Route("/runs/{run_id}/labels", queue_page), Route("/runs/{run_id}/labels/next", next_page)]
