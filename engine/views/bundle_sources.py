"""Reading runs that live in bundles, without importing them into the user's store.

A bundle (or several) is loaded into an in-memory store, so every view (report, web pages, compare,
history) reads it through the same storage contract as the LMDB log. `engine compare last-green RUN
--from DIR` looks for the newest green run among the store's runs and the directory's bundles.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable

from engine.errors import UserError
from engine.input.bundle_files import bundle_headers, load_bundle, skipped_bundle
from engine.runtime.bundle_import import import_bundle
from engine.runtime.run_status import summarize
from engine.store.blobs import pack_blob
from engine.store.bundle_format import Bundle
from engine.store.contract import EventStore
from engine.store.memory import MemoryStore
from engine.views.export.bundle import referenced_blobs, run_rows
from engine.views.history import last_green


def store_of_bundles(bundles: Iterable[tuple[str, Bundle]]) -> MemoryStore:
    """An in-memory store holding each bundle's run (a run bundled twice is held once)."""
    memory = MemoryStore()
    for name, bundle in bundles:
        import_bundle(memory, bundle, name)
    return memory


def open_bundle_store(location: str | os.PathLike[str]) -> tuple[MemoryStore, str]:
    """`engine serve --bundle FILE`, `engine report FILE`: (the store, the bundle's run id)."""
    bundle = load_bundle(location)
    return store_of_bundles([(str(location), bundle)]), bundle.header.run_id


def copy_run(source: EventStore, run_id: str, dest: EventStore) -> None:
    """One run's events and blobs from one store into another (for a comparison across the two)."""
    rows = run_rows(source, run_id)
    blobs = [pack_blob(b.data) for b in referenced_blobs(source, rows)]
    dest.append([(run_id, r.tag, r.data) for r in rows], blobs)


def last_green_anywhere(
    log: EventStore, experiment: str, cand_id: str, directory: str | os.PathLike[str] | None,
    warn: Callable[[str], None] = lambda _: None,
) -> tuple[EventStore, str] | None:
    """The newest green run of the experiment before the candidate, in the store or among the
    bundles of `directory`: (a store holding both it and the candidate, its id), or None. A damaged
    bundle is skipped and named to `warn`: one cut-off upload must not fail every later gate."""
    local = last_green(log, experiment, cand_id)
    found = (log, local) if local else None
    if directory is None:
        return found
    chosen = [loc for loc, h in bundle_headers(directory, "--from", warn) if h.experiment == experiment]
    if not chosen:
        return found
    memory = MemoryStore()
    for location in chosen:
        try:
            import_bundle(memory, load_bundle(location, "--from"), location)
        except UserError as exc:  # cut off after its header, or refused by the import's checks
            warn(skipped_bundle(location, str(exc)))
    if cand_id not in memory.run_ids():
        copy_run(log, cand_id, memory)
    remote = last_green(memory, experiment, cand_id)
    if remote is None:
        return found
    if local and summarize(log, local).started_ts >= summarize(memory, remote).started_ts:
        return found
    return memory, remote
