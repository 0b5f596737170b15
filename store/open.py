"""Opening a store the normal way: the LMDB log with its default keepers (the projection snapshots,
the trial index and the report digests, store.kept.snapshots.Keeper), wired here and nowhere else.

The log's modules (store.log) know keepers only by their protocol (store.log.keepers): every command,
the runtime, the web view and the benchmarks open a store through `open_event_log`, so none forgets them
(tests/test_store_open.py holds that no module outside the store builds an EventLog itself).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from engine.store.log.event_log import DEFAULT_MAP_SIZE, EventLog
from engine.store.log.keepers import BatchKeeper


def default_keepers() -> Sequence[BatchKeeper]:
    """The keepers of a store opened the normal way; imported at the first append only (a reader
    never loads the kept projections nor the trial index)."""
    from engine.store.kept.snapshots import Keeper

    return (Keeper(),)


def open_event_log(
    path: str | os.PathLike[str],
    map_size: int = DEFAULT_MAP_SIZE,
    readonly: bool | None = None,
    max_map_size: int | None = None,
) -> EventLog:
    """The store at `path` (created when new and writable), keeping its kept records as it appends.
    See `EventLog` for `readonly` and the sizes."""
    return EventLog(path, map_size, readonly, max_map_size, keepers=default_keepers)
