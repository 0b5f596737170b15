"""`engine status`'s figures, kept beside the run state at each of its saves (see `store.kept.snapshots`).

Known to the reader by the state's version and tags its writer recorded in the store
(store.kept.state_source): `engine status` reads this record without importing the run state's module.
"""

from __future__ import annotations

from engine.store.kept.read import Derived
from engine.store.projections.status import StatusCounts, counts_of

STATUS = Derived("status", 1, "state", StatusCounts, counts_of)
