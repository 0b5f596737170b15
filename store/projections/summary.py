"""A run's summary from its lifecycle events alone (cheap: trials are not decoded): `engine list`,
the runs page, and the live-run check. The tags it reads come from its handlers."""

from __future__ import annotations

import msgspec

from engine.events import kinds as k
from engine.store.contract import EventStore
from engine.store.projection import Projection


# a Struct, not a dataclass (same fields, same fingerprint, same stored bytes): a dataclass compiles
# its methods from source at import, and `engine list` imports this
class RunSummary(msgspec.Struct):
    run_id: str
    experiment: str = ""
    status: str = "pending"
    trials_total: int = 0
    started_ts: float = 0.0
    finished_ts: float = 0.0
    origin: str = "manual"
    pid: int = 0
    host: str = ""
    message: str = ""  # why it ended early, when it did
    cancel_requested: bool = False
    narrowed_by: list[str] = msgspec.field(default_factory=list)  # "--case", "--variant": a partial rerun


def _started(s: RunSummary, e: k.RunStarted) -> None:
    s.experiment, s.trials_total, s.origin = e.experiment, e.trials_total, e.origin
    s.status, s.pid, s.host = "running", e.pid, e.host
    s.started_ts = s.started_ts or e.ts
    s.narrowed_by = s.narrowed_by or list(e.narrowed_by)  # a resumed run keeps what it first ran under


def _completed(s: RunSummary, e: k.RunCompleted) -> None:
    s.status, s.finished_ts, s.message = e.status, e.ts, e.message


def _cancel(s: RunSummary, e: k.CancelRequested) -> None:
    s.cancel_requested = True


SUMMARY = Projection[RunSummary](
    {k.RunStarted: _started, k.RunCompleted: _completed, k.CancelRequested: _cancel}
)


def load_summary(log: EventStore, run_id: str) -> RunSummary:
    return SUMMARY.load(log, run_id, RunSummary(run_id))
