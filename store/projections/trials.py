"""One record per trial, folded from the log: what exports and the web view show of each trial.

Records are small (no output text: the output stays a blob and is read when shown), so memory does
not grow with the size of outputs. The rules are run_state's: a trial completes at most once, a
failure after a completion is ignored, and only the current grading round's grades count (a
regrade resets them). The tags this fold reads come from its handlers, so a new event it handles
is read without a hand-kept list to update.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from engine.events import kinds as k
from engine.events.spec import CaseSpec, VariantSpec
from engine.store.contract import EventStore
from engine.store.projection import Projection

Key = tuple[str, str, int]


@dataclass(slots=True)
class TrialRecord:
    variant: str
    case: str
    repeat: int  # from 0, as in the log; outputs number repeats from 1
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
    transcript_hash: str = ""
    service_hashes: dict[str, str] = field(default_factory=dict)  # a sandbox's services' output, by name
    agent_metrics: dict[str, float] = field(default_factory=dict)
    error_kind: str = ""
    error_class: str = ""
    message: str = ""  # the error message, or why the trial was skipped
    graded: bool = False
    passed: bool = False
    score: float | None = None
    judge_tokens: int = 0
    grades: list[k.GraderResult] = field(default_factory=list)
    fingerprint: str = ""  # the request's (docs/reuse.md)
    reused_from: tuple[str, str, str] | None = None  # a reused trial's source: (run, variant, case)
    ttft_ms: float | None = None  # a streamed answer's time to first token, and its pace after it
    tokens_per_s: float | None = None

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

    @property
    def finished(self) -> bool:
        return self.completed or self.failed or self.skipped


@dataclass(slots=True)
class RunTrials:
    run_id: str
    experiment: str = ""
    source: str = ""  # the experiment file, for reproducer commands
    seed: int = 0
    grading: int = 0
    variant_order: dict[str, int] = field(default_factory=dict)
    case_order: dict[str, int] = field(default_factory=dict)
    records: dict[Key, TrialRecord] = field(default_factory=dict)
    # what each trial was asked (transcripts): the variants' specs and the cases
    variants: dict[str, VariantSpec] = field(default_factory=dict)
    cases: dict[str, CaseSpec] = field(default_factory=dict)

    def record(self, key: Key) -> TrialRecord:
        found = self.records.get(key)
        if found is None:
            found = self.records[key] = TrialRecord(*key)
        return found

    def finished(self) -> list[TrialRecord]:
        """Trials that reached a final state, in variant, case, repeat order (the spec's order)."""
        big = len(self.variant_order) + len(self.case_order) + 1
        done = [r for r in self.records.values() if r.finished]
        done.sort(key=lambda r: (self.variant_order.get(r.variant, big), r.variant,
                                 self.case_order.get(r.case, big), r.case, r.repeat))  # fmt: skip
        return done


def _defined(run: RunTrials, e: k.ExperimentDefined) -> None:
    run.experiment, run.source, run.seed = e.spec.name, e.source, e.spec.seed
    run.case_order = {c.id: i for i, c in enumerate(e.spec.cases)}
    run.cases = {c.id: c for c in e.spec.cases}


def _proposed(run: RunTrials, e: k.VariantProposed) -> None:
    run.variant_order.setdefault(e.variant.name, len(run.variant_order))
    run.variants[e.variant.name] = e.variant


def _regrade(run: RunTrials, e: k.RegradeStarted) -> None:
    run.grading = e.grading
    for r in run.records.values():
        regraded(r)


# what each trial event does to its record (the kept trial index folds with these same functions)
def started(rec: TrialRecord, e: k.TrialStarted, grading: int) -> None:
    if not (rec.completed or rec.failed):
        rec.started_ts = e.ts


def completed(rec: TrialRecord, e: k.TrialCompleted, grading: int) -> None:
    if rec.completed:
        return
    rec.completed, rec.output_hash, rec.finished_ts = True, e.output_hash, e.ts
    rec.latency_ms = e.latency_ms
    rec.tokens_in, rec.tokens_out, rec.cost_usd = e.tokens_in, e.tokens_out, e.cost_usd
    rec.attempts, rec.exit_code = e.attempts, e.exit_code
    rec.fingerprint = e.fingerprint
    if isinstance(e, k.TrialReused):
        rec.reused_from = (e.source_run, e.source_variant, e.source_case)
    if e.agent is not None:
        rec.stderr_hash, rec.agent_metrics = e.agent.stderr_hash, dict(e.agent.metrics)
        rec.transcript_hash, rec.service_hashes = e.agent.transcript_hash, dict(e.agent.services)
        rec.ttft_ms, rec.tokens_per_s = e.agent.ttft_ms, e.agent.tokens_per_s


def failed(rec: TrialRecord, e: k.TrialFailed, grading: int) -> None:
    if rec.completed or rec.failed:
        return
    rec.failed, rec.error_kind, rec.message, rec.finished_ts = True, e.error_kind, e.message, e.ts
    rec.error_class, rec.exit_code = e.error_class or e.error_kind, e.exit_code
    rec.latency_ms, rec.attempts = e.latency_ms, e.attempts
    rec.tokens_in, rec.tokens_out, rec.cost_usd = e.tokens_in, e.tokens_out, e.cost_usd


def graded(rec: TrialRecord, e: k.TrialGraded, grading: int) -> None:
    """Only the current grading round's grades count."""
    if e.grading == grading and not rec.graded:
        rec.graded, rec.passed, rec.score, rec.grades = True, e.passed, e.score, list(e.grades)
        rec.judge_tokens = e.judge_tokens


def skipped(rec: TrialRecord, e: k.TrialSkipped, grading: int) -> None:
    rec.skipped, rec.message = True, rec.message or e.reason


def regraded(rec: TrialRecord) -> None:
    """A new grading round: the earlier rounds' grades no longer count."""
    rec.graded, rec.passed, rec.score, rec.grades, rec.judge_tokens = False, False, None, [], 0


ON_RECORD: dict[type, Callable[[TrialRecord, Any, int], None]] = {
    k.TrialStarted: started, k.TrialCompleted: completed, k.TrialReused: completed, k.TrialFailed: failed,
    k.TrialGraded: graded, k.TrialSkipped: skipped,
}  # fmt: skip


def _on_record(handler: Callable[[TrialRecord, Any, int], None]) -> Callable[[RunTrials, Any], None]:
    def fold(run: RunTrials, e: Any) -> None:
        handler(run.record((e.variant, e.case, e.repeat)), e, run.grading)

    return fold


TRIALS = Projection[RunTrials](
    {
        k.ExperimentDefined: _defined,
        k.VariantProposed: _proposed,
        k.RegradeStarted: _regrade,
        **{kind: _on_record(handler) for kind, handler in ON_RECORD.items()},
    }
)


def load_trials(log: EventStore, run_id: str) -> RunTrials:
    return TRIALS.load(log, run_id, RunTrials(run_id))
