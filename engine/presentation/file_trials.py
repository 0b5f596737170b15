"""The HTML file's drill-down data: each shown cell's trials (output, graders' verdicts and reasons,
error, costs, the agent's transcript) and its first output's word diff against the baseline's, as one
JSON document the file's own script reads. Outputs are capped: the file must stay small enough to mail."""

from __future__ import annotations

import json
from collections.abc import Callable

from engine.presentation.diff import word_ops
from engine.presentation.file_transcripts import transcript_cap, transcript_json
from engine.presentation.matrix import MatrixRow
from engine.store.projections.trials import TrialRecord

OUTPUT_CHARS = 4000  # per trial in the file at most; engine serve's trial page has the whole output
OUTPUT_BUDGET = 3_000_000  # characters of output in the whole file: a big run's file stays mailable
MIN_CHARS = 400


def output_cap(trials: int) -> int:
    """Each trial's output is cut here: 4,000 characters, less when the run is big (not under 400)."""
    return max(MIN_CHARS, min(OUTPUT_CHARS, OUTPUT_BUDGET // max(trials, 1)))


def trial_json(rec: TrialRecord, output: str | None, cap: int = OUTPUT_CHARS) -> dict[str, object]:
    error = f"{rec.error_class}: {rec.message}" if rec.error_class or rec.error_kind else rec.message or None
    grades = [
        {"name": g.name, "passed": g.passed, "score": g.score, "reason": g.reason, "error": g.error}
        for g in rec.grades
    ]
    return {
        "repeat": rec.repeat + 1,
        "status": rec.status,
        "output": None if output is None else output[:cap],
        "cut": 0 if output is None else max(len(output) - cap, 0),
        "error": error,
        "latency_ms": round(rec.latency_ms, 1),
        "cost_usd": rec.cost_usd,
        "tokens": rec.tokens_in + rec.tokens_out,
        "grades": grades,
    }


def drill_data(
    rows: list[MatrixRow],
    baseline: str | None,
    output: Callable[[TrialRecord], str | None],
    transcript: Callable[[TrialRecord], str | None] = lambda rec: None,
) -> dict[str, object]:
    """{baseline, cases: {case: {prompt, expected, cells: {variant: {trials, diff}}}}}: a diff is one
    list of pieces (diff.word_ops) of the first repeat's output against the baseline's; each trial
    carries its transcript (file_transcripts) or null."""
    cap = output_cap(sum(len(c.finished) for row in rows for c in row.cells.values()))
    recorded = [r.transcript_hash for row in rows for c in row.cells.values() for r in c.finished]
    t_cap = transcript_cap(sum(map(bool, recorded)))
    cases: dict[str, object] = {}
    for row in rows:
        base = row.cells.get(baseline) if baseline else None
        cells: dict[str, object] = {}
        for variant, cell in row.cells.items():
            diff = None
            against = None if base is None or variant == baseline else base.output
            if against is not None and cell.output is not None:
                diff = word_ops(against[:cap], cell.output[:cap])
            ordered = sorted(cell.finished, key=lambda r: r.repeat)
            trials = [trial_json(r, output(r), cap) | {"transcript": transcript_json(transcript(r), t_cap)}
                      for r in ordered]  # fmt: skip
            cells[variant] = {"verdict": cell.verdict, "word": cell.word, "trials": trials, "diff": diff}
        cases[row.case] = {"prompt": row.prompt, "expected": row.expected, "tags": row.tags, "cells": cells}
    return {"baseline": baseline, "cases": cases}


def script_json(data: object) -> str:
    """JSON safe inside a <script type="application/json">: no `<` at all, so nothing ends it early."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")
