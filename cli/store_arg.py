"""The store a command's `--store` names (or $ENGINE_STORE, or ./.engine), and opening it. Apart from
cli.options, which declares the option with typer: the typer-free reads (cli.fast_reads) need these
two and not typer."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def store_path(store: Path | None) -> Path:
    return store or Path(os.environ.get("ENGINE_STORE") or ".engine")


def open_log(store: Path | None, write: bool = False) -> Any:
    """The store, read-only unless the command writes; decoding damage inside the block is reported
    as damage (see cli.store_open)."""
    from engine.cli.store_open import open_store

    return open_store(store_path(store), write)
