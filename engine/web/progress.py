"""Live progress of a run from its incrementally folded view: done/total, rate, ETA, errors by class."""

from __future__ import annotations

from collections import Counter

from engine.events.outcome import outcome_word
from engine.presentation.status_words import badge_class
from engine.store.contract import EventStore
from engine.store.kept.snapshots import STATES, SUMMARIES, load
from engine.store.projections.run_state import RunState
from engine.store.projections.summary import RunSummary
from engine.web.data import RunView


def progress(view: RunView, now: float) -> dict[str, object]:
    records = view.trials.records.values()
    errors = Counter(r.error_class for r in records if r.status == "error")
    counts = (
        sum(r.finished for r in records),
        sum(r.status == "pass" for r in records),
        sum(r.status == "fail" for r in records),
    )
    return _progress(view.summary, counts, errors, view.seen_seq, now)


def last_of_run(log: EventStore, run_id: str) -> int:
    """The run's last event (the page's live stream starts after it): from the snapshots when they
    know it, without reading the log's events."""
    known = getattr(log, "last_of", None)
    found = known(run_id) if known is not None else None
    return log.last_seq() if found is None else found


KeptCounts = tuple[RunSummary, tuple[int, int, int], Counter[str]]


def kept_counts(log: EventStore, run_id: str) -> KeptCounts:
    """What progress needs from the run's kept summary and state (decoding the state is most of a
    page's cost: the web keeps this per run position, report_cache.KeptResults)."""
    summary, state = load(log, SUMMARIES, run_id), load(log, STATES, run_id)
    errors = Counter({cls: t.count for (stage, cls), t in state.errors.items() if stage == "trial"})
    return summary, _counts(state), errors


def kept_progress(
    log: EventStore, run_id: str, seq: int, now: float, kept: KeptCounts | None = None
) -> dict[str, object]:
    """The same figures from the run's kept summary and state: the cost of a page, not of the run."""
    summary, counts, errors = kept or kept_counts(log, run_id)
    return _progress(summary, counts, errors, seq, now)


def _counts(state: RunState) -> tuple[int, int, int]:
    """(finished, passed, failed) trials, as the trial records' statuses count them."""
    cells = state.cells.values()
    finished = sum((c.completed | c.failed | c.skipped).bit_count() for c in cells)
    passed = sum((c.completed & c.passed).bit_count() for c in cells)
    failed = sum((c.completed & c.graded & ~c.passed & ~c.unscored).bit_count() for c in cells)
    return finished, passed, failed


def _progress(
    summary: RunSummary, counts: tuple[int, int, int], errors: Counter[str], seq: int, now: float
) -> dict[str, object]:
    done, passed, failed = counts
    total = max(summary.trials_total, done)
    end = summary.finished_ts or now
    elapsed = max(end - summary.started_ts, 0.0) if summary.started_ts else 0.0
    rate = done / elapsed if elapsed > 0 else 0.0
    running = summary.status == "running"
    eta = (total - done) / rate if running and rate > 0 else None
    word = outcome_word(summary.status, done, sum(errors.values()))
    return {
        "run_id": summary.run_id,
        "experiment": summary.experiment,
        "status": summary.status,
        "outcome": word,  # the status as every surface says it, and its badge's colour
        "status_class": badge_class(word),
        "done": done,
        "total": total,
        "passed": passed,
        "failed": failed,
        "errors": sum(errors.values()),
        "errors_by_class": dict(sorted(errors.items(), key=lambda item: (-item[1], item[0]))),
        "elapsed_s": round(elapsed, 1),
        "rate_per_s": round(rate, 2),
        "eta_s": None if eta is None else round(eta, 1),
        "seq": seq,
    }
