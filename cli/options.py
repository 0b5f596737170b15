"""What every command module shares: the common options and the store they name. Light on purpose:
a command module imports this at start, and `engine --help` imports every command module."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

StoreOpt = Annotated[
    Path | None, typer.Option("--store", help="Store directory (default ./.engine or $ENGINE_STORE).")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the report as JSON.")]
JsonListOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]


def format_choices(kind: Literal["report", "export"], built_in: str) -> str:
    """A `--format` option's help: the registry's names (engine's own, then installed packages') when
    a command's help is what was asked for; otherwise the built-in names, so a command that parses
    its options, or `engine --help` (it lists the commands, not their options), does not read every
    installed distribution's entry points (~25 ms) for a text nobody sees."""
    if "--help" not in sys.argv[2:]:
        return built_in
    from engine.presentation.formats import FORMATS

    return FORMATS.choices(kind)


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
    as damage (see cli.store_open, imported here when a store is opened: `--help` opens none)."""
    from engine.cli.store_open import open_store

    return open_store(store_path(store), write)


def output_file(path: Path | None, command: str, option: str) -> Path | None:
    """A file a command will write, checked before the work that fills it: a folder that does not
    exist or cannot be written to, or a folder given as the file, is bad input (exit 2 naming the
    option), not an I/O error after the report was built."""
    if path is None:
        return None
    from engine.errors import InputError

    folder = path.parent  # "." for a bare name
    if path.is_dir():
        raise InputError(command, option, f"{path} is a folder: expected a file's path")
    if not folder.is_dir():
        raise InputError(command, option, f"no folder {folder} to write {path.name} in")
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise InputError(command, option, f"{path} cannot be written (permissions)")
    return path
