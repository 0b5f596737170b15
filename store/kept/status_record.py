"""`engine status`'s figures, kept beside the run state at each of its saves (see `store.snapshots`).

Known to the reader by the state's pinned version and tags (store.state_source): `engine status`
reads this record without importing the run state's module.
"""

from __future__ import annotations

from engine.store.kept.read import Derived
from engine.store.kept.state_source import RUN_STATE_SOURCE
from engine.store.projections.status import StatusCounts, counts_of

STATUS = Derived("status", 1, RUN_STATE_SOURCE, StatusCounts, counts_of)
