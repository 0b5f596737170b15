"""Rebuild a run's state and report from the log (the replay path)."""

from __future__ import annotations

import hashlib

import msgspec

from engine.events.spec import ExperimentSpec
from engine.store.log import EventLog
from engine.store.projection import fold, run_events
from engine.store.projections.run_state import RunState, evolve


def load_state(log: EventLog, run_id: str, grading: int | None = None) -> RunState:
    """The run folded from its log; `grading` replays an earlier grading round (default: the latest)."""
    return fold(evolve, RunState(run_id, target_grading=grading), run_events(log, run_id))


def spec_hash(spec: ExperimentSpec) -> str:
    return hashlib.sha256(msgspec.msgpack.encode(spec)).hexdigest()
