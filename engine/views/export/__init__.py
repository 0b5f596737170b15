"""`engine export RUN_ID --format jsonl|junit|rundir`: one record per trial, from the trials projection.

Each output is read from the blob store when it is written, so memory does not grow with the size of
the outputs. A format is one module with a `write(log, run, out)` function plus one line in the
formats registry (engine.presentation.formats).
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from engine.store.blobs import read_text
from engine.store.contract import EventStore
from engine.store.projections.scenarios import reproducer_command
from engine.store.projections.trials import RunTrials, TrialRecord

Write = Callable[[str], object]


def trial_fields(rec: TrialRecord) -> dict[str, object]:
    """The JSON fields shared by every format (everything but the output text)."""
    return {
        # repeats are numbered from 1 in every output (the log counts from 0)
        "variant": rec.variant, "case": rec.case, "repeat": rec.repeat + 1, "status": rec.status,
        "score": rec.score, "passed": rec.passed if rec.graded else None,
        "latency_ms": rec.latency_ms, "tokens_in": rec.tokens_in, "tokens_out": rec.tokens_out,
        "cost_usd": rec.cost_usd, "judge_tokens": rec.judge_tokens, "attempts": rec.attempts,
        "exit_code": rec.exit_code, "agent_metrics": rec.agent_metrics or None,
        "grades": [msgspec.structs.asdict(g) for g in rec.grades],
        "error": rec.message if rec.failed and not rec.completed else None,
        "error_kind": rec.error_kind or None,
        "error_class": rec.error_class or None,
        "skip_reason": rec.message if rec.status == "skipped" else None,
        "fingerprint": rec.fingerprint or None, "reused_from": reused_from(rec),
        # a streamed answer's pace (target stream = true); absent otherwise
        **({"ttft_ms": rec.ttft_ms, "tokens_per_s": rec.tokens_per_s} if rec.ttft_ms is not None else {}),
    }  # fmt: skip


def reused_from(rec: TrialRecord) -> dict[str, object] | None:
    """A reused trial's source: the run, and its trial (the same repeat, numbered from 1)."""
    if rec.reused_from is None:
        return None
    run, variant, case = rec.reused_from
    return {"run": run, "variant": variant, "case": case, "repeat": rec.repeat + 1}


def reproducer_of(run: RunTrials, rec: TrialRecord) -> str | None:
    """`engine run FILE --case C --variant V --seed S` for a failing or errored trial."""
    if rec.status not in ("fail", "error"):
        return None
    return reproducer_command(run.source, rec.case, rec.variant, run.seed)


def output_of(log: EventStore, rec: TrialRecord) -> str | None:
    return read_text(log, rec.output_hash) if rec.completed and rec.output_hash else None


def stderr_of(log: EventStore, rec: TrialRecord) -> str | None:
    return read_text(log, rec.stderr_hash) if rec.stderr_hash else None


def service_logs_of(log: EventStore, rec: TrialRecord) -> dict[str, str]:
    """What the services of the trial's sandbox wrote, by service name."""
    return {name: read_text(log, key) or "" for name, key in rec.service_hashes.items()}


def transcript_of(log: EventStore, rec: TrialRecord) -> str | None:
    """The JSONL conversation a command agent wrote (ENGINE_TRANSCRIPT), when it wrote one."""
    return read_text(log, rec.transcript_hash) if rec.transcript_hash else None


def agent_messages(log: EventStore, rec: TrialRecord) -> list[dict[str, object]] | None:
    """That conversation as a list of messages (each line was checked when the trial ran)."""
    text = transcript_of(log, rec)
    return None if text is None else [msgspec.json.decode(line) for line in text.splitlines() if line.strip()]


__all__ = [
    "RunTrials", "agent_messages", "output_of", "reproducer_of", "stderr_of", "trial_fields", "transcript_of",
]  # fmt: skip
