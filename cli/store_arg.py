"""The store a command's `--store` names (or $ENGINE_STORE, or ./.engine), and opening it. Apart from
cli.options, which declares the option with typer: the typer-free reads (cli.fast_reads) need these
two and not typer."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def store_path(store: Path | None) -> Path:
    """The store's directory; a file there is bad input (exit 2 naming --store), not an I/O error."""
    path = store or Path(os.environ.get("ENGINE_STORE") or ".engine")
    if path.exists() and not path.is_dir():
        from engine.errors import InputError

        raise InputError("--store", "", f"{path} is a file: expected a store directory (or a new one's path)")
    return path


def made_store(path: Path) -> Path:
    """The store's directory, made when new: a path that cannot be made is bad input naming --store."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        from engine.errors import InputError

        raise InputError("--store", "", f"cannot make the store directory {path}: {exc.strerror}") from None
    return path


def open_log(store: Path | None, write: bool = False) -> Any:
    """The store, read-only unless the command writes; decoding damage inside the block is reported
    as damage (see cli.store_open)."""
    from engine.cli.store_open import open_store

    return open_store(store_path(store), write)
