"""The run state's kept snapshot and the status figures derived from it (see `store.snapshots`).

A module of its own so `engine status` reads the status record (whose version is checked against
the run state's fingerprint: the state's type is imported) without the keeper and the trial index.
"""

from __future__ import annotations

from engine.store.projections.run_state import RUN_STATE, RunState
from engine.store.projections.status import StatusCounts, counts_of
from engine.store.snapshot_codec import Snapshotted
from engine.store.snapshot_read import Derived

# version 2: a cell's first output is its lowest repeat's (it was the first to finish). Cells stored
# as arrays (run_state.Cell an array-like Struct) changed the fingerprint, not the number
STATES = Snapshotted("state", 2, RUN_STATE, RunState, RunState)
STATUS = Derived("status", 1, STATES, StatusCounts, counts_of)
