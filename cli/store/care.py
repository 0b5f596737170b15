"""`engine check`, `engine backup` and `engine rebuild`: keep the store safe."""

from __future__ import annotations

from pathlib import Path

import typer

from engine.cli.store_open import open_store
from engine.errors import InputError
from engine.events.commands import engine_command
from engine.store.log.verify import SHOWN


def check_command(store: Path, run_id: str | None) -> int:
    """Print what is damaged (if anything) and a summary; 0 when clean, 2 when damage was found."""
    from engine.views.queries import resolve_run

    with open_store(store, write=False) as log:
        run_id = None if run_id is None else resolve_run(log, run_id)
        report = log.check(run_id)
    for problem in report.problems[:SHOWN]:
        typer.echo(f"damaged: {problem}", err=True)
    if len(report.problems) > SHOWN:
        typer.echo(f"damaged: ... and {len(report.problems) - SHOWN} more", err=True)
    scope = f"run {run_id}" if run_id else f"runs: {len(report.runs)}"
    summary = f"{store}: {report.events} events, {report.blobs} blobs, {scope}"
    if report.problems:
        typer.echo(f"error: store damaged: {summary}: {len(report.problems)} problems", err=True)
        return 2
    typer.echo(f"{summary}: ok")
    return 0


def backup_command(store: Path, dest: Path) -> None:
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise InputError("engine backup", "DEST", f"{dest} exists and is not an empty folder")
    with open_store(store, write=False) as log:
        dest.mkdir(parents=True, exist_ok=True)
        log.backup(dest)
    size = (dest / "data.mdb").stat().st_size
    typer.echo(f"backup written ({size:,} bytes); verify it with:")  # the command names where
    typer.echo(f"  {engine_command('check', '--store', str(dest))}")


def rebuild_command(store: Path) -> None:
    """Every snapshot folded again from the log: what `list`, `status` and `report` read then is the
    log's own answer (the snapshots are only ever a shortcut to it)."""
    from engine.store.kept.snapshots import rebuild

    with open_store(store, write=True) as log:
        written = rebuild(log)
    typer.echo(f"{store}: {written} snapshots rebuilt from the log")
