"""Live progress of a run from its incrementally folded view: done/total, rate, ETA, errors by class."""

from __future__ import annotations

from collections import Counter

from engine.web.data import RunView


def progress(view: RunView, now: float) -> dict[str, object]:
    records = view.trials.records.values()
    done = sum(r.finished for r in records)
    summary = view.summary
    total = max(summary.trials_total, done)
    end = summary.finished_ts or now
    elapsed = max(end - summary.started_ts, 0.0) if summary.started_ts else 0.0
    rate = done / elapsed if elapsed > 0 else 0.0
    running = summary.status == "running"
    eta = (total - done) / rate if running and rate > 0 else None
    errors = Counter(r.error_class for r in records if r.status == "error")
    return {
        "run_id": summary.run_id,
        "experiment": summary.experiment,
        "status": summary.status,
        "done": done,
        "total": total,
        "passed": sum(r.status == "pass" for r in records),
        "failed": sum(r.status == "fail" for r in records),
        "errors": sum(errors.values()),
        "errors_by_class": dict(errors.most_common()),
        "elapsed_s": round(elapsed, 1),
        "rate_per_s": round(rate, 2),
        "eta_s": None if eta is None else round(eta, 1),
        "seq": view.seen_seq,
    }
