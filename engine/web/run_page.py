"""The run page: live progress, variants, forest plot, flaky cases, tags, budget."""

from __future__ import annotations

import json
import time
from typing import Any

from engine.web.context import WebContext
from engine.web.html import e, href, num, pct, q, table
from engine.web.label_pages import run_section
from engine.web.progress import kept_progress, last_of_run
from engine.web.race_chart import race_section
from engine.web.svg import Interval, forest


def run_body(ctx: WebContext, run_id: str, root: str) -> tuple[str, str]:
    """(title, body) of the run page."""
    report: dict[str, Any] = json.loads(ctx.report(run_id))
    after = last_of_run(ctx.log, run_id)
    live = kept_progress(ctx.log, run_id, after, time.time())
    base = f"{root}/runs/{q(run_id)}"
    links = [
        f'<a href="{href(base + "/matrix")}">Matrix</a>',
        f'<a href="{href(base + "/matrix", show="failing")}">Failing cases</a>',
        f'<a href="{href(root + "/history/" + q(report["experiment"]))}">History</a>',
        f'<a href="{href(root + "/compare", cand=run_id)}">Compare…</a>',
    ]
    if report.get("variations"):
        links.append(f'<a href="{href(base + "/tuning")}">Tuning session</a>')
    body = (
        f'<h1>{e(report["experiment"])} <span class="badge {e(live["status"])}" data-field="status">'
        f'{e(live["status"])}</span></h1><p class="meta">run <code>{e(run_id)}</code> · '
        + " · ".join(links)
        + "</p>"
        + progress_section(live, run_id, after)
        + "<h2>Variants</h2>"
        + variants_table(report)
        + race(report)
        + "<h2>Deltas against the baseline</h2>"
        + forest(intervals(report))
        + "<h2>Flaky cases</h2>"
        + flaky_table(report, base)
        + "<h2>By tag</h2>"
        + tags_table(report)
        + "<h2>Budget used</h2>"
        + budget(report)
        + run_section(report, run_id, root)
    )
    return f"{report['experiment']} {run_id}", body


def race(r: dict[str, Any]) -> str:
    stopping = r.get("stopping") or {}
    if stopping.get("rule") != "race":
        return ""
    return "<h2>Race</h2>" + race_section(stopping)


def progress_section(live: dict[str, Any], run_id: str, after: int) -> str:
    errors = "".join(f"<li>{e(c)}: {n}</li>" for c, n in live["errors_by_class"].items()) or "<li>none</li>"
    eta = "-" if live["eta_s"] is None else f"{live['eta_s']:.0f} s"
    return (
        f'<section id="progress" data-run="{e(run_id)}" data-after="{after}">'
        f'<progress max="{live["total"] or 1}" value="{live["done"]}"></progress>'
        f'<p><b data-field="done">{live["done"]}</b> / '
        f'<span data-field="total">{live["total"]}</span> trials · '
        f'<span data-field="rate_per_s">{live["rate_per_s"]}</span>/s · '
        f'ETA <span data-field="eta">{eta}</span>'
        f' · passed <span data-field="passed">{live["passed"]}</span> · errors '
        f'<span data-field="errors">{live["errors"]}</span></p>'
        f'<ul class="errors" data-field="errors_by_class">{errors}</ul></section>'
    )


def variants_table(r: dict[str, Any]) -> str:
    header = [
        "variant",
        "trials",
        "pass rate",
        "mean score",
        "95% CI",
        "p50 ms",
        "p95 ms",
        "tokens",
        "cost $",
        "errors",
    ]
    rows = []
    for v in r["variants"]:
        ci = v.get("ci95")
        role = (
            " (baseline)" if v["name"] == r["baseline"] else " (winner)" if v["name"] == r["winner"] else ""
        )
        rows.append(
            [
                e(v["name"]) + f'<span class="tag">{e(role)}</span>',
                num(v["trials"]),
                pct(v["pass_rate"]),
                num(v["mean_score"]),
                "-" if not ci else f"{ci[0]:.3f}–{ci[1]:.3f}",
                num(v["latency_ms"].get("p50")),
                num(v["latency_ms"].get("p95")),
                num(v["tokens"]["in"] + v["tokens"]["out"]),
                num(v["cost_usd"], 4),
                num(v["errors"]),
            ]
        )
    return table(header, rows)


def intervals(r: dict[str, Any]) -> list[Interval]:
    out = []
    for c in r["comparisons"]:
        if c["delta"] is None:
            continue
        low, high = c["ci95"] or (c["delta"], c["delta"])
        label = f"{c['candidate']} vs {c['baseline']} ({c['metric']})"
        out.append(Interval(label, c["delta"], low, high, c["significant"]))
    return out


def flaky_table(r: dict[str, Any], base: str) -> str:
    rows = [
        [
            f'<a href="{href(base + "/trial", case=f["case"], variant=f["variant"])}">{e(f["case"])}</a>',
            e(f["variant"]),
            f"{f['passes']}/{f['runs']}",
        ]
        for f in r["flaky_cases"]
    ]
    return table(["case", "variant", "passes"], rows) if rows else '<p class="note">No flaky cases.</p>'


def tags_table(r: dict[str, Any]) -> str:
    tags = sorted({t for v in r["variants"] for t in v.get("by_tag", {})})
    if not tags:
        return '<p class="note">No tagged cases.</p>'
    rows = [
        [e(v["name"]), *(pct(v.get("by_tag", {}).get(t, {}).get("pass_rate")) for t in tags)]
        for v in r["variants"]
    ]
    return table(["variant", *tags], rows)


def budget(r: dict[str, Any]) -> str:
    tokens = sum(v["tokens"]["in"] + v["tokens"]["out"] + v["judge_tokens"] for v in r["variants"])
    cost = sum(v["cost_usd"] for v in r["variants"])
    out = f"<p>{tokens:,} tokens (judge included) · ${cost:.4f}</p>"
    if r["budget_exhausted"]:
        notes = [stop["note"] for stop in r.get("budget_stops") or [] if stop.get("note")]
        said = "; ".join(notes) if notes else ", ".join(r["budget_exhausted"])
        out += f'<p class="warn">Budget exhausted: {e(said)}</p>'
    return out
