"""`engine` commands. Heavy imports (trio, lmdb, httpx) happen inside commands so `--help` is fast."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    help="Event-sourced experiments engine for LLM agents.",
)

StoreOpt = Annotated[
    Path | None, typer.Option("--store", help="Store directory (default ./.engine or $ENGINE_STORE).")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the report as JSON.")]


def store_path(store: Path | None) -> Path:
    return store or Path(os.environ.get("ENGINE_STORE") or ".engine")


def open_log(store: Path | None, must_exist: bool = True) -> Any:
    from engine.errors import NotFoundError
    from store.log import EventLog

    path = store_path(store)
    if must_exist and not (path / "data.mdb").exists():
        raise NotFoundError(f"no store at {path} (run an experiment first, or pass --store)")
    return EventLog(path)


@app.command()
def run(
    file: Annotated[Path | None, typer.Argument(help="Experiment file (.toml or .yaml).")] = None,
    store: StoreOpt = None,
    resume: Annotated[str | None, typer.Option("--resume", help="Resume an interrupted run.")] = None,
    run_id: Annotated[
        str | None, typer.Option("--run-id", help="Name the run (re-running it resumes).")
    ] = None,
    as_json: JsonOpt = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Run an experiment to completion, show progress, print and store the report."""
    from cli.run_cmd import run_command

    raise typer.Exit(run_command(file, store_path(store), resume, run_id, as_json, quiet))


@app.command()
def replay(
    run_id: Annotated[str | None, typer.Argument(help="Run id (default: the latest run).")] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Rebuild a run's report from the log alone."""
    from cli.render import print_report
    from engine.queries import replay_json, resolve_run

    with open_log(store) as log:
        data = replay_json(log, resolve_run(log, run_id))
    print_report(data, as_json)


@app.command()
def report(
    run_id: Annotated[str | None, typer.Argument(help="Run id (default: the latest run).")] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show the report stored at the end of a run (rebuilt from the log if the run never finished)."""
    from cli.render import print_report
    from engine.queries import replay_json, resolve_run, stored_report

    with open_log(store) as log:
        rid = resolve_run(log, run_id)
        data = stored_report(log, rid) or replay_json(log, rid)
    print_report(data, as_json)


@app.command("list")
def list_cmd(store: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """List runs in the store."""
    from cli.render import print_runs
    from engine.queries import list_runs

    with open_log(store) as log:
        print_runs(list_runs(log), as_json)


@app.command()
def status(
    run_id: Annotated[str | None, typer.Argument(help="Run id (default: the latest run).")] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Progress of a run; works from another process while the run is live."""
    from cli.render import print_status
    from engine.queries import resolve_run, run_state, summarize

    with open_log(store) as log:
        rid = resolve_run(log, run_id)
        print_status(summarize(log, rid), run_state(log, rid), as_json)


@app.command()
def cancel(
    run_id: Annotated[str, typer.Argument(help="Run id.")],
    store: StoreOpt = None,
    reason: Annotated[
        str, typer.Option(help="Why (recorded in the log).")
    ] = "cancelled from the command line",
) -> None:
    """Ask a live run (in any process) to stop; it keeps its partial results."""
    from engine.api import cancel_run
    from engine.queries import resolve_run

    with open_log(store) as log:
        rid = resolve_run(log, run_id)
        cancel_run(log, rid, reason, by=f"cli pid {os.getpid()}")
    typer.echo(f"cancel requested for {rid}")


@app.command()
def validate(file: Annotated[Path, typer.Argument(help="Experiment file.")]) -> None:
    """Check an experiment file without running it."""
    from actors.variants import expand_variants
    from engine.loader import load_experiment

    spec = load_experiment(file)
    variants = expand_variants(spec)
    trials = len(variants) * len(spec.cases) * spec.repeat.count
    shape = f"{len(variants)} variants x {len(spec.cases)} cases x {spec.repeat.count} repeats"
    typer.echo(f"{file}: ok ({shape} = {trials} trials)")


def main() -> None:
    """Console entry point: user errors exit 2 with one line and no traceback."""
    from engine.errors import InputError, NotFoundError

    try:
        app()  # standalone mode: usage errors already exit 2
    except (InputError, NotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
