"""The trials API: filter a run's trials, page them, and describe each one in full.

The trials are the rows of the run's kept trial index (their columns: no output, no grades); only
the page's trials are described, from their full records and their blobs. A text search finds
outputs in the index's kept texts (one scan), not a blob per trial.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import msgspec
import numpy as np

from engine.errors import InputError
from engine.events.graders import GRADERS
from engine.events.spec import CommandTargetSpec, variant_target
from engine.presentation.matrix import has_grading_error
from engine.presentation.matrix_query import Searched
from engine.store.contract import EventStore
from engine.store.projections.trials import TrialRecord
from engine.store.trial_index.search import search_rows
from engine.store.trial_index.table import STATUS, finished_rows
from engine.views.export import output_of, service_logs_of, stderr_of, transcript_of, trial_fields
from engine.web.data import IndexedView, RunView
from engine.web.transcript_search import transcript_holds, transcript_rows

View = RunView | IndexedView

MAX_LIMIT = 500
# grading_error: a grader could not judge the trial, whether or not another grader scored it
STATUSES = ("pass", "fail", "error", "skipped", "ungraded", "grading_error")


@dataclass(frozen=True, slots=True)
class TrialFilter:
    variant: str = ""
    case: str = ""
    status: str = ""  # pass | fail | error | skipped | ungraded | grading_error
    tag: str = ""
    q: str = ""  # text in the case id, prompt, output or error message (case-insensitive)
    limit: int = 50
    offset: int = 0


def case_tags(view: View) -> dict[str, list[str]]:
    return {c.id: list(c.tags) for c in view.spec.cases} if view.spec else {}


def case_prompts(view: View) -> dict[str, str]:
    return {c.id: c.prompt for c in view.spec.cases} if view.spec else {}


def _matches(rec: TrialRecord, f: TrialFilter, tags: dict[str, list[str]]) -> bool:
    return (
        (not f.variant or rec.variant == f.variant)
        and (not f.case or rec.case == f.case)
        and (not f.status or _status_is(rec, f.status))
        and (not f.tag or f.tag in tags.get(rec.case, ()))
    )


def _status_is(rec: TrialRecord, status: str) -> bool:
    """grading_error: any trial a grader could not judge, even when another grader scored it."""
    return has_grading_error(rec) if status == "grading_error" else rec.status == status


def _text_hit(
    log: EventStore, rec: TrialRecord, needle: str, prompts: dict[str, str], searched: Searched | None
) -> bool:
    if any(needle in text.lower() for text in (rec.case, prompts.get(rec.case, ""), rec.message)):
        return True
    if searched(rec) if searched is not None else needle in (output_of(log, rec) or "").lower():
        return True
    return transcript_holds(log, rec, lambda text: needle in text.lower())


def select(log: EventStore, view: View, f: TrialFilter) -> Iterator[TrialRecord]:
    tags, prompts, needle = case_tags(view), case_prompts(view), f.q.lower()
    searched = view.searched(needle) if needle else None  # outputs found ahead (a kept index)
    for rec in view.trials.finished():
        if _matches(rec, f, tags) and (not needle or _text_hit(log, rec, needle, prompts, searched)):
            yield rec


def indexed_rows(log: EventStore, view: IndexedView, f: TrialFilter) -> np.ndarray:
    """select's trials, as rows of the run's kept index, filtered on its columns."""
    t, ix = view.table, view.index
    rows = finished_rows(t, view.trials.variant_order, view.trials.case_order)
    keep = np.ones(len(rows), dtype=bool)
    if f.variant:
        keep &= t.variant[rows] == (ix.variants.index(f.variant) if f.variant in ix.variants else -1)
    if f.case:
        keep &= t.case[rows] == (ix.cases.index(f.case) if f.case in ix.cases else -1)
    if f.status == "grading_error":
        keep &= t.grading_errors()[rows]
    elif f.status:
        keep &= t.status[rows] == STATUS.get(f.status, -1)
    if f.tag:
        tags = case_tags(view)
        keep &= np.array([f.tag in tags.get(c, ()) for c in ix.cases], dtype=bool)[t.case[rows]]
    if f.q:
        keep &= _indexed_hits(log, view, f.q.lower())[rows]
    return rows[keep]


def _indexed_hits(log: EventStore, view: IndexedView, needle: str) -> np.ndarray:
    """_text_hit of every row: its case id, prompt, error message, output (found in the kept texts),
    transcript."""
    t, prompts = view.table, case_prompts(view)
    by_case = np.array(
        [needle in c.lower() or needle in prompts.get(c, "").lower() for c in view.index.cases]
    )
    hit = by_case[t.case] if len(t) else np.zeros(0, dtype=bool)
    found = [i for i, m in t.message.items() if needle in m.lower()]
    found += search_rows(view.index, needle)
    found += transcript_rows(log, view, lambda text: needle in text.lower())
    hit[np.array(found, dtype=np.int64)] = True
    return hit


def check_names(view: View, f: TrialFilter) -> None:
    """A variant or case the run does not hold is a bad query (naming the run's), not an empty page."""
    logged = view.index if isinstance(view, IndexedView) else None  # the names the trials carry
    records = view.trials.records.values()
    variants = sorted(
        {r.variant for r in records} | set(view.variants) | set(logged.variants if logged else ())
    )
    if f.variant and f.variant not in variants:
        raise InputError("query", "variant", f"expected one of {', '.join(variants)}, got {f.variant!r}")
    cases = list(
        dict.fromkeys([*view.trials.cases, *(r.case for r in records), *(logged.cases if logged else ())])
    )
    if f.case and f.case not in cases:
        shown = ", ".join(cases[:10]) + (f" (and {len(cases) - 10} more)" if len(cases) > 10 else "")
        raise InputError("query", "case", f"expected a case of this run ({shown}), got {f.case!r}")


def trials_page(log: EventStore, view: View, f: TrialFilter) -> dict[str, object]:
    """{total, offset, limit, trials}: the filtered trials' page, each described in full."""
    limit = max(0, min(f.limit, MAX_LIMIT))
    if isinstance(view, IndexedView):
        rows = indexed_rows(log, view, f)
        page = [describe(log, view, view.table.record(int(r))) for r in rows[f.offset : f.offset + limit]]
        return {
            "run_id": view.trials.run_id,
            "total": len(rows),
            "offset": f.offset,
            "limit": limit,
            "trials": page,
        }
    total, page = 0, []
    for rec in select(log, view, f):
        if f.offset <= total < f.offset + limit:
            page.append(describe(log, view, rec))
        total += 1
    return {"run_id": view.trials.run_id, "total": total, "offset": f.offset, "limit": limit, "trials": page}


def describe(log: EventStore, view: View, rec: TrialRecord) -> dict[str, object]:
    """Everything shown of one trial: prompts, output, grades and the judge's rationale, costs."""
    output, rec = view.output(log, rec), view.full(rec)
    variant = view.variants.get(rec.variant)
    judges = _judge_names(view)
    return {
        **trial_fields(rec),
        "prompt": case.prompt if (case := view.trials.cases.get(rec.case)) else "",
        "expected": _expected(view, rec.case),
        "reference": case.reference if (case := view.trials.cases.get(rec.case)) else None,
        "system": variant.system if variant is not None else None,
        "output": output,
        "stderr": stderr_of(log, rec),
        "services": service_logs_of(log, rec),
        "sandbox": _sandbox_line(view, rec.variant),
        "transcript": transcript_of(log, rec),
        "retries": max(rec.attempts - 1, 0),
        "judge_rationale": "\n".join(g.reason for g in rec.grades if g.name in judges and g.reason) or None,
    }


def _sandbox_line(view: View, name: str) -> str | None:
    """The variant's sandbox policy in a line ("bubblewrap · network none · memory_mb 512"), or None."""
    spec, variant = view.spec, view.variants.get(name)
    if spec is None or variant is None or variant.target.get("kind", spec.target.kind) != "command":
        return None  # nothing to resolve (a plugin's kind may not be installed where the store is read)
    target = variant_target(spec.target, variant)
    if not isinstance(target, CommandTargetSpec) or not target.policy.sandboxed:
        return None
    policy = target.policy
    parts = [policy.kind, f"network {policy.network}", *(f"port {p}" for p in policy.host_ports)]
    parts += [f"{k} {v}" for k, v in msgspec.structs.asdict(policy.limits).items() if v is not None]
    return " · ".join(parts)


def _expected(view: View, case: str) -> str | None:
    found = view.trials.cases.get(case)
    return None if found is None or found.expected is None else str(found.expected)


def _judge_names(view: View) -> set[str]:
    graders = view.spec.graders if view.spec is not None else []
    judges = (g for g in graders if GRADERS.of(g).calls_model and not GRADERS.of(g).pairwise)
    return {g.name or "judge" for g in judges} | {"judge"}
