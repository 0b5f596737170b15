"""The trial drill-down, compare, tuning-session and history pages (every value escaped)."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from markupsafe import Markup

from engine.errors import NotFoundError
from engine.events.graders import GRADERS
from engine.presentation import compare_table as ct
from engine.presentation.judge_view import criterion_scores
from engine.presentation.matrix_query import MatrixQuery, matcher
from engine.presentation.matrix_repeats import marked, pattern_of
from engine.presentation.templates import render
from engine.presentation.transcript import conversation
from engine.store.kept.snapshots import run_ids
from engine.views.compare.comparison import NOTHING
from engine.views.history import history
from engine.views.pairwise_trials import case_pairwise
from engine.web.compare_reads import kept_diffs_html
from engine.web.context import WebContext
from engine.web.diffs import baseline_diffs
from engine.web.html import num, run_url
from engine.web.json_api import _known
from engine.web.judge_prompts import judge_prompts
from engine.web.label_pages import label_panel
from engine.web.svg import Point, series
from engine.web.templated import body as templated
from engine.web.trials_api import TrialFilter, trials_page

# the compare page's tables: the terminal's (one table, one set of labels, raw and Holm p both)
COMPARE_TABLES = dict(metric_tables=ct.metric_tables, case_header=ct.CASE_HEADER, case_rows=ct.case_rows,
                      case_test=ct.CASE_TEST, zip=zip)  # fmt: skip


def trial_body(ctx: WebContext, run_id: str, case: str, variant: str, root: str,
               search: MatrixQuery | None = None) -> tuple[str, str]:  # fmt: skip
    """The case's trials, side by side by variant; with a search, its matches marked and the repeats
    that hold it named."""
    f = TrialFilter(case=case, variant=variant, limit=500)
    found, baseline, judged_in_pairs, view_spec = ctx.views.indexed(
        run_id,
        lambda v: (_known_case(v, case) and trials_page(ctx.log, v, f), v.baseline, _pairwise(v), v.spec),
    )
    by_variant: dict[str, list[dict[str, Any]]] = defaultdict(list)
    # the verdicts are read from the run's log: only when a grader judges in pairs (or did, in a regrade)
    pairwise = case_pairwise(ctx.log, run_id, case) if judged_in_pairs else {}
    for t in found["trials"]:  # type: ignore[attr-defined]
        t["pairwise"] = pairwise.get((t["variant"], t["repeat"] - 1), [])  # the API numbers repeats from 1
        t["facts"] = _facts(t)
        t["source"] = _source(t.get("reused_from"), root)
        t["conversation"] = conversation(t.get("transcript"))
        t["criteria"] = {g["name"]: criterion_scores(g.get("raw", "")) for g in t["grades"]}
        t["matches"] = search is not None and bool(search.q) and _holds(t, matcher(search))
        t["judge_prompts"] = judge_prompts(view_spec, t)
        by_variant[t["variant"]].append(t)
    shown = [t for trials in by_variant.values() for t in trials]
    first = shown[0] if shown else {}
    expected = "\n".join(x for x in (first.get("expected"), first.get("reference")) if x)
    body = render(
        "trial_page.html", case=case, run_id=run_id, run_link=run_url(root, run_id),
        matrix_link=run_url(root, run_id, "/matrix"), by_variant=by_variant, prompt=first.get("prompt", ""),
        expected=expected, baseline=baseline, baseline_diffs=baseline_diffs(by_variant, baseline),
        labels=Markup(label_panel(ctx, run_id, case, variant, shown, root, view_spec) if shown else ""),
        search=search.q if search else "", marks=_marks(search),
    )  # fmt: skip
    return f"{case} {run_id}", body


def _holds(t: dict[str, Any], hit: Callable[[str], bool]) -> bool:
    """The trial's own texts hold the search: output, error, grader reasons, transcript."""
    texts = [t.get("output") or "", t.get("error") or "", *(g.get("reason", "") for g in t["grades"])]
    texts += [x for m in t["conversation"] for x in (m.content, *(c.arguments for c in m.tool_calls))]
    return any(hit(x) for x in texts if x)


def _marks(search: MatrixQuery | None) -> Callable[[str], list[tuple[str, bool]]] | None:
    pattern = pattern_of(search) if search is not None else None
    return (lambda text: marked(text, pattern)) if pattern is not None else None


def _known_case(view: Any, case: str) -> bool:
    """An unknown case (or variant) is a 404: neither in the spec nor among the trials logged."""
    cases = {c.id for c in view.spec.cases} if view.spec else set()
    if case not in cases and case not in view.trials.case_order:
        raise NotFoundError(f"no case {case!r} in run {view.trials.run_id!r}")
    return True


def _pairwise(view: Any) -> bool:
    """Whether the run may hold pairwise verdicts: a pairwise grader in its spec or a regrade's."""
    graders = view.spec.graders if view.spec is not None else []
    return any(GRADERS.of(g).pairwise for g in graders) or len(view.rounds) > 1


def _source(source: dict[str, Any] | None, root: str) -> tuple[str, str] | None:
    """A reused trial's source (the export's `reused_from`): its words and its trial page's link."""
    if not source:
        return None
    query = urlencode({"case": source["case"], "variant": source["variant"]})
    words = f"run {source['run']}, {source['variant']} / {source['case']}, repeat {source['repeat']}"
    return words, run_url(root, str(source["run"]), "/trial?" + query)


def _facts(t: dict[str, Any]) -> str:
    tokens = f"{t['tokens_in']}+{t['tokens_out']} tokens"
    return f"{num(t['latency_ms'])} ms · {tokens} · ${num(t['cost_usd'], 4)} · retries {t['retries']}"


def compare_body(ctx: WebContext, base: str, cand: str, root: str) -> tuple[str, str]:
    ids = run_ids(ctx.log)
    if not base or not cand:
        return "Compare", templated("compare_page.html", ids=ids, base=base, cand=cand, r=None)
    r, states = ctx.comparisons.get(_known(ctx, base), _known(ctx, cand))
    cand_id = r["candidate_run"]
    diffs = "" if r["nothing_to_compare"] else kept_diffs_html(ctx.log, states, r["verdict_changes"], root)
    html = templated(
        "compare_page.html", ids=ids, base=base, cand=cand, r=r, nothing=NOTHING, diffs=Markup(diffs),
        trial_url=run_url(root, cand_id, "/trial"), **COMPARE_TABLES,
    )  # fmt: skip
    return f"compare {cand} vs {base}", html


def tuning_body(ctx: WebContext, run_id: str, root: str) -> tuple[str, str]:
    report = json.loads(ctx.report(run_id))
    variations = report.get("variations", [])
    points = [
        Point(
            f"{v['parameter']}={v['value']}",
            v["candidate_score"],
            "accepted" if v["accepted"] else "rejected",
        )
        for v in variations
    ]
    best: dict[str, object] = {}
    for v in variations:
        if v["accepted"]:
            best[v["parameter"]] = v["value"]
    chart = series(points, "score by variation", x_label="variation (in the order tried)")
    body = templated(
        "tuning_page.html", run_id=run_id, root=root, chart=Markup(chart),
        best=best, variations=variations,
    )  # fmt: skip
    return f"tuning {run_id}", body


def history_body(ctx: WebContext, experiment: str, root: str) -> tuple[str, str]:
    """The experiment's runs from the history projection (as `engine history`), green ones marked."""
    runs = history(ctx.log, experiment)
    if not runs:
        raise NotFoundError(f"no experiment {experiment!r} in this store")
    points = [Point(p.run_id, p.pass_rate) for p in runs if p.pass_rate is not None]
    chart = Markup(series(points, "pass rate over runs", line=True, x_label="run (oldest first)"))
    body = templated("history_page.html", experiment=experiment, runs=runs, chart=chart, root=root)
    return f"history {experiment}", body
