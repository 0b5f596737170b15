"""`engine import`, `export`, `check`, `backup` and `rebuild`: runs in and out of the store, and its care."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from engine.cli.options import StoreOpt, format_choices, open_log, output_file, store_path


def import_cmd(
    files: Annotated[
        list[str], typer.Argument(help="Bundle files or URLs (from engine export --format bundle).")
    ],
    store: StoreOpt = None,
    as_id: Annotated[str | None, typer.Option("--as", help="Import the run under this id instead.")] = None,
) -> None:
    """Add bundled runs to the store; a bundle already there adds nothing."""
    from engine.cli.store.bundles import import_command

    import_command(files, store_path(store), as_id)


def export(
    run_id: Annotated[str | None, typer.Argument(help="Run id (default: the latest run).")] = None,
    store: StoreOpt = None,
    fmt: Annotated[
        str, typer.Option("--format", "-f", help=format_choices("export", "jsonl | junit | rundir | bundle"))
    ] = "jsonl",
    out: Annotated[
        str | None,
        typer.Option(
            "--out",
            "-o",
            help="File (jsonl, junit; default stdout), new directory (rundir), or bundle file or URL.",
        ),
    ] = None,
) -> None:
    """Export a run: JSON lines, JUnit XML for CI, a run directory (index, per-trial files), or a bundle
    (the whole run, for `engine import` in another store)."""
    from engine.presentation.formats import export_run
    from engine.views.queries import resolve_run

    def to_stdout(text: str) -> None:
        sys.stdout.buffer.write(text.encode())

    if out is not None and fmt in ("jsonl", "junit"):  # a file (rundir: a new folder; bundle: a URL too)
        output_file(Path(out), "engine export", "--out")
    with open_log(store) as log:
        target = out if fmt == "bundle" or out is None else Path(out)  # a bundle may go to a URL
        export_run(log, resolve_run(log, run_id), fmt, target, to_stdout)
    sys.stdout.flush()
    if out is not None:
        typer.echo(out)


def check(
    run_id: Annotated[str | None, typer.Argument(help="Only this run (default: everything).")] = None,
    store: StoreOpt = None,
) -> None:
    """Read the whole store: pages, every event, the run index, every blob's content hash.

    Exit 0 when it is clean, 2 when damage was found (each problem is listed).
    """
    from engine.cli.store.care import check_command

    raise typer.Exit(check_command(store_path(store), run_id))


def backup(
    dest: Annotated[Path, typer.Argument(help="A new (or empty) folder for the copy.")],
    store: StoreOpt = None,
) -> None:
    """Copy the store (compacted, consistent even while a run writes) into DEST."""
    from engine.cli.store.care import backup_command

    backup_command(store_path(store), dest)


def rebuild(store: StoreOpt = None) -> None:
    """Fold every run's kept projections (summaries, report state) again from the log."""
    from engine.cli.store.care import rebuild_command

    rebuild_command(store_path(store))
