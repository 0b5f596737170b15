"""Export as a run directory: index.jsonl, summary.json (the report), <variant>/<case>/run-N/...

The layout other evaluation tools write, so their viewers and scripts read engine's runs. A case
from an eval suite file (`tests[]`, whose cases carry `metadata.suite`, or a .jsonl dataset of AgentV's
`suites:`) sits in a folder per suite: <variant>/<suite>/<case>/run-N/. Each case's summary.json
carries its fingerprint (a hash of the variant's and the case's definitions).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from itertools import groupby
from pathlib import Path

import msgspec

from engine.errors import InputError
from engine.runtime.plan import render_prompt
from engine.store.contract import EventStore
from engine.store.projections.trials import RunTrials, TrialRecord
from engine.views.export import agent_messages, output_of, reproducer_of, stderr_of, trial_fields


def safe_name(name: str) -> str:
    """A single safe path component; names that had to change get a short hash so they stay distinct."""
    clean = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._")[:80] or "_"
    return clean if clean == name else f"{clean}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"


def by_cell(trials: list[TrialRecord]) -> Iterator[tuple[tuple[str, str], list[TrialRecord]]]:
    for key, group in groupby(trials, key=lambda r: (r.variant, r.case)):
        yield key, list(group)


def write(log: EventStore, run: RunTrials, out: Path) -> int:
    """The run directory: index.jsonl, summary.json (the report), <variant>/<case>/run-N/..."""
    from engine.views.queries import replay_json, stored_report

    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise InputError(str(out), "--out", "expected a new or empty directory for --format rundir")
    out.mkdir(parents=True, exist_ok=True)
    trials = run.finished()
    (out / "summary.json").write_bytes(
        (stored_report(log, run.run_id) or replay_json(log, run.run_id)) + b"\n"
    )
    with (out / "index.jsonl").open("w", encoding="utf-8") as index:
        for (variant, case), recs in by_cell(trials):
            case_dir = out / safe_name(variant) / _suite_folder(run, case) / safe_name(case)
            for rec in recs:
                if rec.status == "skipped":  # never attempted (early exit): listed, with no run-N folder
                    result = {"run_id": run.run_id, "experiment": run.experiment, **trial_fields(rec)}
                    result |= {"run": rec.repeat + 1, "result_path": None}
                else:
                    run_dir = case_dir / f"run-{rec.repeat + 1}"
                    result = _write_attempt(log, run, rec, run_dir)
                    result["result_path"] = (run_dir / "result.json").relative_to(out).as_posix()
                index.write(msgspec.json.encode(result).decode() + "\n")
            summary = case_summary(variant, case, recs)
            summary["fingerprint"] = fingerprint(run, variant, case)
            _dump(case_dir / "summary.json", summary)
    return len(trials)


def _suite_folder(run: RunTrials, case: str) -> str:
    spec = run.cases.get(case)
    suite = spec.metadata.get("suite") if spec is not None else None
    return safe_name(suite) if isinstance(suite, str) and suite else ""


def _write_attempt(log: EventStore, run: RunTrials, rec: TrialRecord, run_dir: Path) -> dict[str, object]:
    (run_dir / "outputs").mkdir(parents=True, exist_ok=True)
    output = output_of(log, rec)
    if output is not None:
        (run_dir / "outputs" / "answer.md").write_text(output, encoding="utf-8")
    stderr = stderr_of(log, rec)
    if stderr is not None:  # the agent's diagnostics, beside its answer
        (run_dir / "outputs" / "stderr.txt").write_text(stderr, encoding="utf-8")
    grading = {"graded": rec.graded, "grading": run.grading, "score": rec.score}
    grading |= {"passed": rec.passed if rec.graded else None, "grades": trial_fields(rec)["grades"]}
    metrics = {"tokens_in": rec.tokens_in, "tokens_out": rec.tokens_out, "cost_usd": rec.cost_usd}
    metrics |= {"judge_tokens": rec.judge_tokens, "attempts": rec.attempts, "exit_code": rec.exit_code}
    metrics |= rec.agent_metrics
    timing = {"duration_ms": rec.latency_ms, "started_ts": rec.started_ts, "finished_ts": rec.finished_ts}
    result = {"run_id": run.run_id, "experiment": run.experiment, **trial_fields(rec), "run": rec.repeat + 1}
    result["reproducer"] = reproducer_of(run, rec)
    result |= {
        "grading_path": "grading.json", "metrics_path": "metrics.json", "timing_path": "timing.json",
        "output_path": "outputs/answer.md" if output is not None else None,
        "stderr_path": "outputs/stderr.txt" if stderr is not None else None,
        "timing": timing, "metrics": metrics,
    }  # fmt: skip
    messages = agent_messages(log, rec) or transcript(run, rec, output)  # the agent's own, when it wrote one
    _dump(run_dir / "transcript.json", {"messages": messages})
    raw = "".join(msgspec.json.encode(m).decode() + "\n" for m in messages)
    (run_dir / "transcript-raw.jsonl").write_text(raw, encoding="utf-8")
    result |= {"transcript_path": "transcript.json", "transcript_raw_path": "transcript-raw.jsonl"}
    for name, doc in (("grading", grading), ("metrics", metrics), ("timing", timing), ("result", result)):
        _dump(run_dir / f"{name}.json", doc)
    return result


def transcript(run: RunTrials, rec: TrialRecord, output: str | None) -> list[dict[str, object]]:
    """The conversation of one attempt: the system text, the prompt as sent, the answer or the error."""
    variant, case = run.variants.get(rec.variant), run.cases.get(rec.case)
    messages: list[dict[str, object]] = []
    if variant is not None and variant.system:
        messages.append({"role": "system", "content": variant.system})
    if case is not None:
        prompt = render_prompt(variant, case) if variant is not None else case.prompt
        messages.append({"role": "user", "content": prompt})
    if output is not None:
        messages.append({"role": "assistant", "content": output})
    elif rec.failed:
        messages.append({"role": "error", "content": rec.message, "error_class": rec.error_class or None})
    return messages


def fingerprint(run: RunTrials, variant: str, case: str) -> str:
    """AgentV's aggregate provenance: what was run (the variant's definition, the case's) as a hash, so
    one configuration's case reads the same fingerprint in every run that ran it, and another's not."""
    asked = [run.variants.get(variant), run.cases.get(case)]
    return "sha256:" + hashlib.sha256(msgspec.json.encode(asked)).hexdigest()[:16]


def case_summary(variant: str, case: str, recs: list[TrialRecord]) -> dict[str, object]:
    graded = [r for r in recs if r.graded]
    scores = [r.score for r in graded if r.score is not None]
    durations = [r.latency_ms for r in recs if r.completed or r.failed]
    passes = sum(r.passed for r in graded)
    return {
        "variant": variant, "case": case, "run_count": sum(r.status != "skipped" for r in recs),
        "graded_count": len(graded),
        "pass_count": passes, "pass_rate": passes / len(graded) if graded else None,
        "error_count": sum(r.status == "error" for r in recs),
        "skipped_count": sum(r.status == "skipped" for r in recs),
        "mean_score": sum(scores) / len(scores) if scores else None,
        "mean_duration_ms": round(sum(durations) / len(durations), 6) if durations else None,
        "runs": [f"run-{r.repeat + 1}" for r in recs if r.status != "skipped"],
    }  # fmt: skip


def _dump(path: Path, doc: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
