"""`engine export RUN_ID --format jsonl|junit|rundir`: one record per trial, folded from the log.

The fold keeps only small per-trial records (no output text); each output is
read from the blob store when it is written, so memory does not grow with the
size of the outputs. The fold follows `store.projections.run_state`: a trial is
completed at most once, a failure after a completion is ignored, and only the
current grading round counts (a regrade resets the grades).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import groupby
from pathlib import Path

import msgspec

from engine.errors import InputError
from engine.events import kinds as k
from engine.store.blobs import read_text
from engine.store.contract import EventStore
from engine.store.projection import run_events

FORMATS = ("jsonl", "junit", "rundir")
EXPORT_TAGS = {
    "experiment.defined", "variant.proposed", "trial.started", "trial.completed",
    "trial.failed", "trial.graded", "trial.skipped", "regrade.started",
}  # fmt: skip
Write = Callable[[str], object]


@dataclass(slots=True)
class TrialRecord:
    variant: str
    case: str
    repeat: int
    started_ts: float = 0.0
    finished_ts: float = 0.0
    completed: bool = False
    failed: bool = False
    skipped: bool = False
    output_hash: str = ""
    latency_ms: float = 0.0
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    attempts: int = 0
    exit_code: int | None = None
    stderr_hash: str = ""
    agent_metrics: dict[str, float] = field(default_factory=dict)
    error_kind: str = ""
    message: str = ""  # the error message, or why the trial was skipped
    graded: bool = False
    passed: bool = False
    score: float | None = None
    judge_tokens: int = 0
    grades: list[k.GraderResult] = field(default_factory=list)

    @property
    def status(self) -> str:
        """pass | fail | error | skipped; ungraded (an output not graded yet: an interrupted run) or
        grading_error (no grader could score it, e.g. an unparseable judge answer): never a failure."""
        if self.completed:
            if not self.graded:
                return "ungraded"
            if self.score is None and not self.passed:
                return "grading_error"
            return "pass" if self.passed else "fail"
        return "error" if self.failed else "skipped"

    def fields(self) -> dict[str, object]:
        """The JSON fields shared by every format (everything but the output text)."""
        return {
            # repeats are numbered from 1 in every output (the log counts from 0)
            "variant": self.variant, "case": self.case, "repeat": self.repeat + 1, "status": self.status,
            "score": self.score, "passed": self.passed if self.graded else None,
            "latency_ms": self.latency_ms, "tokens_in": self.tokens_in, "tokens_out": self.tokens_out,
            "cost_usd": self.cost_usd, "judge_tokens": self.judge_tokens, "attempts": self.attempts,
            "exit_code": self.exit_code, "agent_metrics": self.agent_metrics or None,
            "grades": [msgspec.structs.asdict(g) for g in self.grades],
            "error": self.message if self.failed and not self.completed else None,
            "error_kind": self.error_kind or None,
            "skip_reason": self.message if self.status == "skipped" else None,
        }  # fmt: skip


@dataclass(slots=True)
class RunTrials:
    run_id: str
    experiment: str = ""
    grading: int = 0
    trials: list[TrialRecord] = field(default_factory=list)  # variant, case, repeat order; finished only


def collect(log: EventStore, run_id: str) -> RunTrials:
    run = RunTrials(run_id)
    records: dict[tuple[str, str, int], TrialRecord] = {}
    variants: dict[str, int] = {}
    cases: dict[str, int] = {}
    for e in run_events(log, run_id, EXPORT_TAGS):
        if isinstance(e, k.ExperimentDefined):
            run.experiment = e.spec.name
            cases = {c.id: i for i, c in enumerate(e.spec.cases)}
        elif isinstance(e, k.VariantProposed):
            variants.setdefault(e.variant.name, len(variants))
        elif isinstance(e, k.RegradeStarted):
            run.grading = e.grading
            for r in records.values():
                r.graded, r.passed, r.score, r.grades, r.judge_tokens = False, False, None, [], 0
        elif isinstance(e, k.TrialEvent):
            key = (e.variant, e.case, e.repeat)
            rec = records.get(key) or records.setdefault(key, TrialRecord(*key))
            _apply(rec, e, run.grading)
    done = [r for r in records.values() if r.completed or r.failed or r.skipped]
    big = len(variants) + len(cases) + 1
    done.sort(
        key=lambda r: (variants.get(r.variant, big), r.variant, cases.get(r.case, big), r.case, r.repeat)
    )
    run.trials = done
    return run


def _apply(rec: TrialRecord, e: k.AnyEvent, grading: int) -> None:
    if isinstance(e, k.TrialStarted):
        if not (rec.completed or rec.failed):
            rec.started_ts = e.ts
    elif isinstance(e, k.TrialCompleted) and not rec.completed:
        rec.completed, rec.output_hash, rec.finished_ts = True, e.output_hash, e.ts
        rec.latency_ms = e.latency_ms
        rec.tokens_in, rec.tokens_out, rec.cost_usd = e.tokens_in, e.tokens_out, e.cost_usd
        rec.attempts, rec.exit_code = e.attempts, e.exit_code
        if e.agent is not None:
            rec.stderr_hash, rec.agent_metrics = e.agent.stderr_hash, dict(e.agent.metrics)
    elif isinstance(e, k.TrialFailed) and not (rec.completed or rec.failed):
        rec.failed, rec.error_kind, rec.message, rec.finished_ts = True, e.error_kind, e.message, e.ts
        rec.latency_ms, rec.attempts = e.latency_ms, e.attempts
        rec.tokens_in, rec.tokens_out, rec.cost_usd = e.tokens_in, e.tokens_out, e.cost_usd
    elif isinstance(e, k.TrialGraded) and e.grading == grading and not rec.graded:
        rec.graded, rec.passed, rec.score, rec.grades = True, e.passed, e.score, list(e.grades)
        rec.judge_tokens = e.judge_tokens
    elif isinstance(e, k.TrialSkipped):
        rec.skipped, rec.message = True, rec.message or e.reason


def output_of(log: EventStore, rec: TrialRecord) -> str | None:
    return read_text(log, rec.output_hash) if rec.completed and rec.output_hash else None


def stderr_of(log: EventStore, rec: TrialRecord) -> str | None:
    return read_text(log, rec.stderr_hash) if rec.stderr_hash else None


def write_jsonl(log: EventStore, run: RunTrials, write: Write) -> int:
    encode = msgspec.json.encode
    for rec in run.trials:
        line = {
            "run_id": run.run_id,
            **rec.fields(),
            "output": output_of(log, rec),
            "stderr": stderr_of(log, rec),
        }
        write(encode(line).decode() + "\n")
    return len(run.trials)


_XML_BAD = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
SYSTEM_OUT_MAX = 20_000


def xml_text(value: object) -> str:
    text = _XML_BAD.sub("\ufffd", str(value))
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def xml_attr(value: object) -> str:
    return '"' + xml_text(value).replace('"', "&quot;").replace("\n", "&#10;").replace("\t", "&#9;") + '"'


def write_junit(log: EventStore, run: RunTrials, write: Write) -> int:
    """One <testsuite> per variant, one <testcase> per case x repeat."""
    suites = [(name, list(group)) for name, group in groupby(run.trials, key=lambda r: r.variant)]
    total = _counts(run.trials)
    write('<?xml version="1.0" encoding="UTF-8"?>\n')
    write(f"<testsuites name={xml_attr(run.experiment)}{total}>\n")
    for name, recs in suites:
        write(f"  <testsuite name={xml_attr(name)}{_counts(recs)}>\n")
        write(f'    <properties><property name="run_id" value={xml_attr(run.run_id)}/></properties>\n')
        for rec in recs:
            write(_testcase(log, run, rec))
        write("  </testsuite>\n")
    write("</testsuites>\n")
    return len(run.trials)


def _counts(recs: list[TrialRecord]) -> str:
    statuses = [r.status for r in recs]
    seconds = sum(r.latency_ms for r in recs) / 1000
    return (
        f' tests="{len(recs)}" failures="{statuses.count("fail")}" errors="{statuses.count("error")}"'
        f' skipped="{statuses.count("skipped") + statuses.count("ungraded")}" time="{seconds:.6f}"'
    )


def _testcase(log: EventStore, run: RunTrials, rec: TrialRecord) -> str:
    head = (
        f"    <testcase classname={xml_attr(f'{run.experiment}.{rec.variant}')}"
        f' name={xml_attr(f"{rec.case} #{rec.repeat + 1}")} time="{rec.latency_ms / 1000:.6f}"'
    )
    status = rec.status
    if status == "pass":
        return head + "/>\n"
    if status == "error":
        body = f"<error type={xml_attr(rec.error_kind)} message={xml_attr(rec.message)}/>"
    elif status in ("skipped", "ungraded"):
        reason = rec.message if status == "skipped" else "output not graded (interrupted run)"
        body = f"<skipped message={xml_attr(reason)}/>"
    else:
        score = "-" if rec.score is None else f"{rec.score:.3f}"
        details = "\n".join(f"{g.name}: score={g.score} passed={g.passed} {g.reason}" for g in rec.grades)
        output = (output_of(log, rec) or "")[:SYSTEM_OUT_MAX]
        body = (
            f'<failure type="fail" message={xml_attr(f"score {score}")}>{xml_text(details)}</failure>'
            f"<system-out>{xml_text(output)}</system-out>"
        )
    return f"{head}>{body}</testcase>\n"


def export_run(log: EventStore, run_id: str, fmt: str, out: Path | None, stdout: Write) -> int:
    """Export a run; returns the number of trials written."""
    if fmt not in FORMATS:
        raise InputError("engine export", "--format", f"expected one of {', '.join(FORMATS)}, got {fmt!r}")
    run = collect(log, run_id)
    if fmt == "rundir":
        if out is None:
            raise InputError("engine export", "--out", "expected a directory for --format rundir")
        return write_rundir(log, run, out)
    writer = write_jsonl if fmt == "jsonl" else write_junit
    if out is None:
        return writer(log, run, stdout)
    with out.open("w", encoding="utf-8") as file:
        return writer(log, run, file.write)


def safe_name(name: str) -> str:
    """A single safe path component; names that had to change get a short hash so they stay distinct."""
    clean = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._")[:80] or "_"
    return clean if clean == name else f"{clean}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"


def by_cell(trials: list[TrialRecord]) -> Iterator[tuple[tuple[str, str], list[TrialRecord]]]:
    for key, group in groupby(trials, key=lambda r: (r.variant, r.case)):
        yield key, list(group)


def write_rundir(log: EventStore, run: RunTrials, out: Path) -> int:
    """AgentV-style run directory: index.jsonl, summary.json (the report), <variant>/<case>/run-N/..."""
    from engine.views.queries import replay_json, stored_report

    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise InputError(str(out), "--out", "expected a new or empty directory for --format rundir")
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_bytes(
        (stored_report(log, run.run_id) or replay_json(log, run.run_id)) + b"\n"
    )
    with (out / "index.jsonl").open("w", encoding="utf-8") as index:
        for (variant, case), recs in by_cell(run.trials):
            case_dir = out / safe_name(variant) / safe_name(case)
            for rec in recs:
                run_dir = case_dir / f"run-{rec.repeat + 1}"
                result = _write_attempt(log, run, rec, run_dir)
                result["result_path"] = (run_dir / "result.json").relative_to(out).as_posix()
                index.write(msgspec.json.encode(result).decode() + "\n")
            _dump(case_dir / "summary.json", case_summary(variant, case, recs))
    return len(run.trials)


def _write_attempt(log: EventStore, run: RunTrials, rec: TrialRecord, run_dir: Path) -> dict[str, object]:
    (run_dir / "outputs").mkdir(parents=True, exist_ok=True)
    output = output_of(log, rec)
    if output is not None:
        (run_dir / "outputs" / "answer.md").write_text(output, encoding="utf-8")
    stderr = stderr_of(log, rec)
    if stderr is not None:  # seed 004's agent_stderr
        (run_dir / "outputs" / "stderr.txt").write_text(stderr, encoding="utf-8")
    grading = {"graded": rec.graded, "grading_round": run.grading, "score": rec.score}
    grading |= {"passed": rec.passed if rec.graded else None, "grades": rec.fields()["grades"]}
    metrics = {"tokens_in": rec.tokens_in, "tokens_out": rec.tokens_out, "cost_usd": rec.cost_usd}
    metrics |= {"judge_tokens": rec.judge_tokens, "attempts": rec.attempts, "exit_code": rec.exit_code}
    metrics |= rec.agent_metrics
    timing = {"duration_ms": rec.latency_ms, "started_ts": rec.started_ts, "finished_ts": rec.finished_ts}
    result = {"run_id": run.run_id, "experiment": run.experiment, **rec.fields(), "run": rec.repeat + 1}
    result |= {
        "grading_path": "grading.json", "metrics_path": "metrics.json", "timing_path": "timing.json",
        "output_path": "outputs/answer.md" if output is not None else None,
        "stderr_path": "outputs/stderr.txt" if stderr is not None else None,
        "timing": timing, "metrics": metrics,
    }  # fmt: skip
    for name, doc in (("grading", grading), ("metrics", metrics), ("timing", timing), ("result", result)):
        _dump(run_dir / f"{name}.json", doc)
    return result


def case_summary(variant: str, case: str, recs: list[TrialRecord]) -> dict[str, object]:
    graded = [r for r in recs if r.graded]
    scores = [r.score for r in graded if r.score is not None]
    durations = [r.latency_ms for r in recs if r.completed or r.failed]
    passes = sum(r.passed for r in graded)
    return {
        "variant": variant, "case": case, "run_count": len(recs), "graded_count": len(graded),
        "pass_count": passes, "pass_rate": passes / len(graded) if graded else None,
        "error_count": sum(r.status == "error" for r in recs),
        "skipped_count": sum(r.status == "skipped" for r in recs),
        "mean_score": sum(scores) / len(scores) if scores else None,
        "mean_duration_ms": round(sum(durations) / len(durations), 6) if durations else None,
        "runs": [f"run-{r.repeat + 1}" for r in recs],
    }  # fmt: skip


def _dump(path: Path, doc: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
