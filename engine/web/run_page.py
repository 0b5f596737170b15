"""The run page: live progress, the deltas' forest plot and a race's chart, then the report's
sections, rendered from the typed report through the templates the HTML file uses."""

from __future__ import annotations

import time
from urllib.parse import urlencode

from markupsafe import Markup

from engine.events.report import ReuseReport, RunReport
from engine.presentation.labels_view import has_labels
from engine.presentation.model import as_report
from engine.presentation.report.status import no_comparison_note, status_lines, winner_line
from engine.presentation.report.tables import MAX_FLAKY_ROWS
from engine.presentation.sections import DECIDING, sections
from engine.presentation.templates import render
from engine.runtime.run_status import grading_rounds
from engine.web.context import WebContext
from engine.web.html import q
from engine.web.label_pages import run_section
from engine.web.progress import kept_counts, kept_progress, last_of_run
from engine.web.race_chart import race_section
from engine.web.report_cache import run_position
from engine.web.svg import Interval, forest


def run_body(ctx: WebContext, run_id: str, root: str, grading: int | None = None) -> tuple[str, str]:
    """(title, body) of the run page, of one grading round (default: the latest). Its progress comes
    from the kept snapshots: the page costs the same for a run of any size."""
    report = as_report(ctx.report(run_id, grading))
    after = last_of_run(ctx.log, run_id)
    kept = ctx.reports.kept.get(("progress", run_id, run_position(ctx.log, run_id)),
                                lambda: kept_counts(ctx.log, run_id))  # fmt: skip
    live = kept_progress(ctx.log, run_id, after, time.time(), kept)
    html = run_html(report, live, root, after, rounds(ctx, run_id, report, grading))
    return f"{report.experiment} {run_id}", html


def run_fragment(ctx: WebContext, run_id: str, root: str, grading: int | None = None) -> str:
    """The run page's figures alone (variants, forest plot, sections): what a live page re-fetches."""
    seq = last_of_run(ctx.log, run_id)  # before the report: it covers at least this
    report = as_report(ctx.report(run_id, grading))
    body = render("run_report.html", **figures(report, root))
    return f'<div id="report" data-seq="{seq}">{body}</div>'


def rounds(ctx: WebContext, run_id: str, report: RunReport, asked: int | None) -> list[tuple[int, str]]:
    """The run's grading rounds for the selector. When the latest round's report says round 0, the
    run was never regraded: no walk of its index for regrade events (200,000 rows at 100,000 trials)."""
    if asked is None and report.grading == 0:
        return [(0, "original")]
    return grading_rounds(ctx.log, run_id)


def run_html(
    r: RunReport,
    live: dict[str, object],
    root: str,
    after: int = 0,
    rounds: list[tuple[int, str]] | None = None,
) -> str:
    """The run page's body for a report and its live progress (the structure test renders it too)."""
    base, history = f"{root}/runs/{q(r.run_id)}", f"{root}/history/{q(r.experiment)}"
    compare = f"{root}/compare?{urlencode({'cand': r.run_id})}"
    links = [("Matrix", f"{base}/matrix"), ("Failing cases", f"{base}/matrix?show=failing"),
             ("History", history), ("Compare…", compare)]  # fmt: skip
    if r.variations:
        links.append(("Tuning session", f"{base}/tuning"))
    eta = live["eta_s"]
    queue = run_section(has_labels(r), r.run_id, root)
    return render(
        "run_page.html", live=live, after=after, links=links, eta="-" if eta is None else f"{eta:.0f} s",
        labels=Markup(queue), rounds=rounds or [(r.grading, r.grading_name or "original")],
        **figures(r, root),
    )  # fmt: skip


def figures(r: RunReport, root: str) -> dict[str, object]:
    """What run_report.html shows: the part of the run page that follows a live run. The page shows
    the first flaky cases; the matrix pages through all of them."""
    more = len(r.flaky_cases) > MAX_FLAKY_ROWS
    return dict(
        flaky_url=f"{root}/runs/{q(r.run_id)}/matrix?show=flaky" if more else "",
        r=r, status=status_lines(r), race=Markup(race(r)),
        forest=Markup(forest(intervals(r), no_comparison_note(r))),
        sections=sections(r), winner_line=winner_line(r), deciding=DECIDING,
        tokens=sum(v.tokens.in_ + v.tokens.out + v.judge_tokens for v in r.variants),
        cost=sum(v.cost_usd for v in r.variants), reused=reused_share(r, root),
    )  # fmt: skip


def reused_share(r: RunReport, root: str) -> dict[str, object] | None:
    """The trials taken from earlier runs ([reuse]): how many of the outputs, saving what, from where."""
    parts = [v.reuse for v in r.variants if isinstance(v.reuse, ReuseReport)]
    if not parts:
        return None
    reused, sent = sum(p.trials for p in parts), sum(p.sent for p in parts)
    made = reused + sent + sum(v.trials for v in r.variants if not isinstance(v.reuse, ReuseReport))
    sources: dict[str, int] = {}
    for part in parts:
        for run, count in part.sources.items():
            sources[run] = sources.get(run, 0) + count
    return {
        "trials": reused, "share": reused / made if made else 0.0,
        "tokens": sum(p.tokens_saved for p in parts), "cost": sum(p.cost_saved_usd for p in parts),
        "sources": [(run, count, f"{root}/runs/{q(run)}") for run, count in sorted(sources.items())],
    }  # fmt: skip


def race(r: RunReport) -> str:
    if r.stopping is None or r.stopping.rule != "race":
        return ""
    import msgspec

    return "<h2>Race</h2>" + race_section(msgspec.to_builtins(r.stopping))


def intervals(r: RunReport) -> list[Interval]:
    out = []
    for c in r.comparisons:
        if c.delta is None:
            continue
        low, high = c.ci95 or (c.delta, c.delta)
        out.append(Interval(f"{c.candidate} vs {c.baseline} ({c.metric})", c.delta, low, high, c.significant))
    return out
