"""The compare page's side-by-side outputs: for the cases whose verdict changed, then for others whose
output changed, the base run's and the candidate's first outputs with a word-level diff; and within a
case (the trial page), each variant's first output against the baseline's."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from engine.presentation.diff import WordDiff, word_diff
from engine.presentation.templates import render
from engine.store.projections.trials import RunTrials, TrialRecord
from engine.views.export import output_of
from engine.web.context import WebContext
from engine.web.html import run_url

MAX_DIFFS = 20


@dataclass(frozen=True, slots=True)
class DiffItem:
    case: str
    variant: str
    change: str  # "pass → fail", or "" (the verdict held, the output changed)
    diff: WordDiff
    href: str


First = dict[tuple[str, str], TrialRecord]


def first_outputs(trials: RunTrials) -> First:
    """Each (variant, case)'s first completed repeat, in the spec's order: one pass over the run."""
    out: First = {}
    for rec in trials.finished():
        if rec.completed:
            out.setdefault((rec.variant, rec.case), rec)
    return out


Changes = dict[str, list[dict[str, str]]]  # the comparison's verdict_changes


def _pairs(base: First, cand: First, changes: Changes, rename: dict[str, str]) -> list[tuple[str, str, str]]:
    """(variant, case, change) to show: the verdict changes, then cells whose first output differs."""
    out = [(c["variant"], c["case"], f"{c['base']} → {c['cand']}") for key in ("failing", "passing")
           for c in changes[key]]  # fmt: skip
    seen = {(v, c) for v, c, _ in out}
    for (variant, case), after in cand.items():
        before = base.get((rename.get(variant, variant), case))
        if (variant, case) not in seen and before is not None and before.output_hash != after.output_hash:
            out.append((variant, case, ""))
        if len(out) >= MAX_DIFFS:
            break
    return out[:MAX_DIFFS]


def _renames(base: First, cand: First) -> dict[str, str]:
    """Variants are matched by name; two single-variant runs are matched whatever their names."""
    names, cand_names = {v for v, _ in base}, {v for v, _ in cand}
    if names & cand_names or len(names) != 1 or len(cand_names) != 1:
        return {}
    return {next(iter(cand_names)): next(iter(names))}


def diffs_html(ctx: WebContext, base_id: str, cand_id: str, changes: Changes, root: str) -> str:
    def read(base_trials: RunTrials, cand_trials: RunTrials) -> list[DiffItem]:
        base, cand, items = first_outputs(base_trials), first_outputs(cand_trials), []
        rename = _renames(base, cand)
        for variant, case, change in _pairs(base, cand, changes, rename):
            before, after = base.get((rename.get(variant, variant), case)), cand.get((variant, case))
            texts = [(output_of(ctx.log, r) or "") if r is not None else "" for r in (before, after)]
            link = run_url(root, cand_id, "/trial?" + urlencode({"case": case, "variant": variant}))
            items.append(DiffItem(case, variant, change, word_diff(*texts), link))
        return items

    items = ctx.views.use(base_id, lambda b: ctx.views.use(cand_id, lambda c: read(b.trials, c.trials)))
    return render("compare_diffs.html", items=items, base_run=base_id, cand_run=cand_id, limit=MAX_DIFFS)


ByVariant = Mapping[str, list[dict[str, Any]]]  # a case's described trials (the trials API's), by variant


def baseline_diffs(by_variant: ByVariant, baseline: str | None) -> list[tuple[str, WordDiff]]:
    """(variant, diff against the baseline) for every other variant of the case, first repeats: none
    when the baseline has no finished trial of it."""
    if baseline is None or baseline not in by_variant:
        return []
    base = by_variant[baseline][0].get("output") or ""
    return [(name, word_diff(base, trials[0].get("output") or ""))
            for name, trials in by_variant.items() if name != baseline and trials]  # fmt: skip
