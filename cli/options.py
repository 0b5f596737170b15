"""What every command module shares: the common options and the store they name. Light on purpose:
a command module imports this at start, and `engine --help` imports every command module."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer

StoreOpt = Annotated[
    Path | None, typer.Option("--store", help="Store directory (default ./.engine or $ENGINE_STORE).")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the report as JSON.")]
JsonListOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]


def store_path(store: Path | None) -> Path:
    return store or Path(os.environ.get("ENGINE_STORE") or ".engine")


def open_log(store: Path | None, write: bool = False) -> Any:
    """The store, read-only unless the command writes; decoding damage inside the block is reported
    as damage (see cli.store_open, imported here when a store is opened: `--help` opens none)."""
    from engine.cli.store_open import open_store

    return open_store(store_path(store), write)
