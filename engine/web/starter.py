"""The command an empty store's page prints: it runs as printed (absolute paths, the store's own)."""

from __future__ import annotations

import shlex
from pathlib import Path

from engine.store.contract import EventStore

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart.toml"


def starter_command(log: EventStore | Path) -> str:
    """`engine run` of the quickstart (the embedded local model: no key, no server) into this store."""
    store = log if isinstance(log, Path) else getattr(log, "path", None)
    experiment = str(QUICKSTART) if QUICKSTART.exists() else "EXPERIMENT.toml"
    tail = f" --store {shlex.quote(str(Path(store).resolve()))}" if store is not None else ""
    return f"engine run {shlex.quote(experiment)}{tail}"
