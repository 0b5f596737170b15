"""What every command module shares: the common options and the store they name. Light on purpose:
a command module imports this at start, and `engine --help` imports every command module."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from engine.cli.store_arg import open_log, store_path

__all__ = ["JsonListOpt", "JsonOpt", "StoreOpt", "open_log", "store_path"]

StoreOpt = Annotated[
    Path | None, typer.Option("--store", help="Store directory (default ./.engine or $ENGINE_STORE).")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the report as JSON.")]
JsonListOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
