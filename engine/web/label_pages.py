"""The labelling pages: the queue (/runs/R/labels), the label panel of the trial page and the run
page's section. Values are escaped here; static/labels.js does the labelling and the keyboard."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from engine.events.codec import to_builtins
from engine.store.projections.label_agreement import label_agreement
from engine.store.projections.labels import LabelState
from engine.web.context import WebContext
from engine.web.html import e, href, num, page, q, table
from engine.web.json_api import _known, in_thread
from engine.web.label_queue import next_unlabelled
from engine.web.labelling import READ_ONLY, queue_of, trial_url

QUEUE_SHOWN = 500
KEYS = "keys: p pass · f fail (then the next unlabelled trial) · n next unlabelled · j/k move · / note"


def figures(state: LabelState) -> str:
    """Each judge against the labels; the script updates the same fields after a label."""
    section = to_builtins(label_agreement(state))
    items = "".join(
        f'<li data-judge="{e(j["grader"])}">{e(j["grader"])}: agreement '
        f'<b data-field="label-agreement">{num(j["agreement"])}</b> · kappa '
        f'<b data-field="label-kappa">{num(j["kappa"])}</b> over '
        f'<span data-field="label-labelled">{j["labelled"]}</span> labels</li>'
        for j in section["judges"]
    )
    return (
        f'<section id="label-figures"><p>labelled outputs <b data-field="label-count">{section["labels"]}</b>'
        f'</p><ul data-field="label-judges">{items or "<li>no judge grader in this run</li>"}</ul></section>'
    )


def queue_body(ctx: WebContext, run_id: str, root: str) -> tuple[str, str]:
    state, items = queue_of(ctx, run_id)
    rows = [
        [
            f'<a href="{e(trial_url(root, run_id, i))}">{e(i.variant)} / {e(i.case)} #{i.repeat}</a>',
            e(", ".join(f"{n}: {_verdict(v)}" for n, v in i.verdicts.items()) or "-"),
            f'<span class="badge {e(i.label)}">{e(i.label or "unlabelled")}</span>',
            e(", ".join(i.reasons)),
        ]
        for i in items[:QUEUE_SHOWN]
    ]
    found = next_unlabelled(items)
    start = ""
    if found:
        start = f'<a id="label-start" href="{e(trial_url(root, run_id, found))}">Label the next trial</a>'

    mode = "" if ctx.can_label else f'<p class="note">{e(READ_ONLY)}</p>'
    head = f'<h1>Labels <a href="{href(root + "/runs/" + q(run_id))}"><code>{e(run_id)}</code></a></h1>'
    note = f'<p class="meta">{len(items)} trials with an output · disagreements first · {start}</p>'
    return f"labels {run_id}", head + mode + figures(state) + note + table(
        ["trial", "judges", "label", "first because"], rows, "queue"
    )


def _verdict(value: bool | None) -> str:
    return "-" if value is None else "pass" if value else "fail"


def label_panel(ctx: WebContext, run_id: str, case: str, trials: list[dict[str, Any]], root: str) -> str:
    """Pass / fail buttons and a note for each shown repeat of the case (when the view can label)."""
    state, items = queue_of(ctx, run_id)
    rows = []
    for t in trials:
        key = (t["variant"], case, t["repeat"] - 1)
        if key not in state.outputs:
            continue
        label = state.label_of(key)
        verdict = label.verdict if label else ""
        buttons = (
            '<button type="button" class="label-pass">Pass</button>'
            '<button type="button" class="label-fail">Fail</button>'
            if ctx.can_label else ""
        )  # fmt: skip
        rows.append(
            f'<li class="label-row" data-variant="{e(t["variant"])}" data-case="{e(case)}" '
            f'data-repeat="{t["repeat"]}">{e(t["variant"])} repeat {t["repeat"]}: '
            f'<span class="badge {e(verdict)}" data-field="label">{e(verdict or "unlabelled")}</span> '
            f"{buttons}</li>"
        )
    if not rows:
        return ""
    shown = frozenset((t["variant"], case, t["repeat"] - 1) for t in trials)
    found = next_unlabelled(items, shown)
    nxt = trial_url(root, run_id, found) if found else ""
    tools = (
        '<label>note <input id="label-note" autocomplete="off"></label>'
        f'<p class="note">{e(KEYS)}</p>'
        if ctx.can_label
        else f'<p class="note">{e(READ_ONLY)}</p>'
    )
    queue = href(f"{root}/runs/{q(run_id)}/labels")
    return (
        f'<section id="labelling" data-run="{e(run_id)}" data-next="{e(nxt)}" '
        f'data-writable="{int(ctx.can_label)}"><h2>Your label (<a href="{queue}">queue</a>)</h2>'
        f'<ul class="label-rows">{"".join(rows)}</ul>{tools}'
        '<p data-field="label-error" class="warn" hidden></p>'
        f"{figures(state)}</section>"
        f'<script src="{e(root)}/static/labels.js" defer></script>'
    )


def run_section(labelled: bool, run_id: str, root: str) -> str:
    """The way to the labelling queue (the report's own section shows the judges against the labels)."""
    queue = f'<a href="{href(root + "/runs/" + q(run_id) + "/labels")}">Label trials</a>'
    if not labelled:
        return f"<h2>Judges against people's labels</h2><p class=\"note\">No labels yet · {queue}</p>"
    return f'<p class="meta">{queue}</p>'



async def queue_page(request: Request) -> HTMLResponse:
    run_id, root = request.path_params["run_id"], request.scope.get("root_path", "")
    title, body = await in_thread(request, lambda ctx: queue_body(ctx, _known(ctx, run_id), root))
    return HTMLResponse(page(request, title, body))


PAGE_ROUTES = [Route("/runs/{run_id}/labels", queue_page)]
