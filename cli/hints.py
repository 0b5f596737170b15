"""Commands the CLI suggests (`next:`, `continue it:`, ways out of an error), each built by
engine.events.commands.engine_command so it runs as printed, from the folder the user is in."""

from __future__ import annotations

import os
from pathlib import Path

from engine.events.commands import engine_command


def default_store() -> Path:
    return Path(os.environ.get("ENGINE_STORE") or ".engine")


def hint(*args: str, store: Path | None = None) -> str:
    """`engine ARGS`, with `--store STORE` when a command run from here would not find that store."""
    extra = ("--store", str(store)) if store is not None and store != default_store() else ()
    return engine_command(*args, *extra)
