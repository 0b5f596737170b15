"""Commands the CLI suggests (`next:`, `continue it:`, ways out of an error), each built by
engine.events.commands.engine_command so it runs as printed, from the folder the user is in."""

from __future__ import annotations

import os
from pathlib import Path

from engine.events.commands import engine_command


def default_store() -> Path:
    return Path(os.environ.get("ENGINE_STORE") or ".engine")


def hint(*args: str, store: Path | None = None) -> str:
    """`engine ARGS`, with `--store STORE` when a command run from here would not find that store:
    an absolute path, so the command runs as printed from any folder."""
    if store is None or store.resolve() == default_store().resolve():
        return engine_command(*args)
    return engine_command(*args, "--store", str(store.resolve()))


WIDTH = 100  # a terminal's width engine's own lines fit


def labelled(label: str, *commands: str) -> list[str]:
    """`label:  command` (more commands aligned under it), or, when a line would pass 100 columns,
    the label alone and each command whole on its own line: a command is never folded."""
    pad = " " * (len(label) + 3)
    lines = [f"{label}:  {commands[0]}", *(pad + command for command in commands[1:])]
    if max(map(len, lines)) <= WIDTH:
        return lines
    return [f"{label}:", *(f"  {command}" for command in commands)]
