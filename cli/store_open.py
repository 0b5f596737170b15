"""Open the store for a command: read-only unless the command writes, damage reported as damage."""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from engine.errors import NotFoundError
from engine.store.errors import StoreDamagedError
from engine.store.log.event_log import EventLog
from engine.store.log.guard import DECODE_DAMAGE
from engine.store.open import open_event_log

# what reading stored bytes raises when they were changed on disk (the store opened fine), where
# a view decodes them itself
READ_DAMAGE = (*DECODE_DAMAGE, zlib.error)


@contextmanager
def open_store(path: Path, write: bool) -> Iterator[EventLog]:
    if not (path / "data.mdb").exists():
        raise NotFoundError(f"no store at {path} (run an experiment first, or pass --store)")
    readonly = True if not write else None  # None: as the files and $ENGINE_STORE_READONLY allow
    with open_event_log(path, readonly=readonly) as log:
        try:
            yield log
        except READ_DAMAGE as exc:
            raise StoreDamagedError(path, f"a stored record does not decode: {exc}") from None
    if not write:
        _say_older_records(path)


def _say_older_records(path: Path) -> None:
    """After an engine upgrade that changed a fold, every read folds the log until the kept records
    are written anew: on a big store seconds instead of milliseconds, with nothing to say why."""
    from engine.store.kept.read import older_records

    if older_records():
        import sys

        from engine.cli.hints import hint, labelled

        said = "note: kept summaries from another engine version: reads fold the log (slow on a big store)"
        lines = [said, *labelled("write them anew", hint("rebuild", store=path))]
        print("\n".join(lines), file=sys.stderr)
