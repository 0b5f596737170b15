"""`engine import`'s work, and the run a command reads straight from a bundle file (`report`, `replay`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer


@contextmanager
def run_source(store: Path, run_id: str | None) -> Iterator[tuple[Any, str]]:
    """(store, run id) for a command given a run id, or a bundle file in its place; the store at
    `store` is opened read-only."""
    from engine.input.bundle_files import SUFFIX, looks_like_bundle

    if run_id is not None and run_id.endswith(SUFFIX):  # a bundle's name: it must be there
        if not looks_like_bundle(run_id):
            from engine.errors import InputError

            raise InputError(run_id, "RUN_ID", "no such bundle file (a run id, or a .bundle file's path)")
        from engine.views.bundle_sources import open_bundle_store

        yield open_bundle_store(run_id)
        return
    from engine.cli.store_open import open_store
    from engine.views.queries import resolve_run

    with open_store(store, write=False) as log:
        yield log, resolve_run(log, run_id)


def import_command(files: list[str], store: Path, as_id: str | None) -> None:
    from engine.errors import InputError
    from engine.input.bundle_files import load_bundle
    from engine.input.flags import check_run_id
    from engine.runtime.bundle_import import import_bundle
    from engine.store.open import open_event_log

    if as_id is not None and len(files) != 1:
        raise InputError("engine import", "--as", "renames one bundle: pass a single FILE with it")
    if as_id is not None:
        check_run_id(as_id, "engine import", "--as")  # before the store is created: nothing is left behind
    bundles = [(name, load_bundle(name)) for name in files]  # all verified before the store opens
    store.mkdir(parents=True, exist_ok=True)
    with open_event_log(store) as log:
        for name, bundle in bundles:
            run_id, outcome = import_bundle(log, bundle, name, as_id)
            events = len(bundle.events)
            typer.echo(f"{name}: {outcome} as {run_id} ({events} events, {len(bundle.blobs)} blobs)")
