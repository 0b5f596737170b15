"""The run state's kept snapshot (see `store.snapshots`); its status figures are store.status_record's.

A module of its own so that the readers of a run's state import neither the keeper nor the trial
index.
"""

from __future__ import annotations

from engine.store.kept.codec import Snapshotted
from engine.store.kept.status_record import STATUS
from engine.store.projections.run_state import RUN_STATE, RunState

__all__ = ["STATES", "STATUS"]

# version 2: a cell's first output is its lowest repeat's (it was the first to finish). Cells stored
# as arrays (run_state.Cell an array-like Struct) changed the fingerprint, not the number. The writer
# records its version and tags in the store for the readers of its derived records (STATES.source).
# Its cells, which grow with the run, are packed in pieces at a save (store.kept.streamed)
STATES = Snapshotted("state", 2, RUN_STATE, RunState, RunState, streamed="cells")
