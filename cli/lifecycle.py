"""`engine list`, `status`, `cancel`, `create` and `validate`: runs seen, stopped, registered and checked.
`list` and `status` are the fast reads: this module imports nothing heavy at start (each command
imports what it needs when it runs)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from engine.cli.options import JsonListOpt, StoreOpt, made_store, open_log, store_path


def list_cmd(store: StoreOpt = None, as_json: JsonListOpt = False) -> None:
    """List runs in the store."""
    from engine.cli.render import print_runs
    from engine.runtime.run_status import list_runs

    with open_log(store) as log:
        runs = list_runs(log)
        if as_json:
            print_runs(runs, as_json)
            return
        from engine.views.history import run_outcome  # the status word every surface shows

        print_runs(runs, as_json, [run_outcome(log, s.run_id, s.status) for s in runs])


def status(
    run_id: Annotated[str | None, typer.Argument(help="Run id (default: the latest run).")] = None,
    store: StoreOpt = None,
    as_json: JsonListOpt = False,
) -> None:
    """Progress of a run; works from another process while the run is live."""
    import time

    from engine.cli.render import print_status
    from engine.runtime.run_status import run_status
    from engine.views.queries import resolve_run

    with open_log(store) as log:
        rid = resolve_run(log, run_id)
        print_status(run_status(log, rid, time.time()), as_json)


def cancel(
    run_id: Annotated[str, typer.Argument(help="Run id.")],
    store: StoreOpt = None,
    reason: Annotated[
        str, typer.Option(help="Why (recorded in the log).")
    ] = "cancelled from the command line",
) -> None:
    """Stop a run and keep its partial results: a live run (in any process) is asked to stop; a run
    whose process is gone is marked cancelled at once."""
    from engine.runtime.cancel import STOPPABLE, cancel_run
    from engine.runtime.run_status import summarize
    from engine.views.queries import resolve_run

    with open_log(store, write=True) as log:
        rid = resolve_run(log, run_id)
        status = summarize(log, rid).status
        if status not in STOPPABLE:
            typer.echo(f"run {rid} already {status}: nothing to cancel")
            return
        holder = cancel_run(log, rid, reason, by=f"cli pid {os.getpid()}")
    if holder is None:
        from engine.cli.hints import hint

        typer.echo(f"run {rid} had no live process: cancelled; it goes on with:")
        typer.echo(f"  {hint('run', '--resume', rid, store=store_path(store))}")
    else:
        typer.echo(f"cancel requested for {rid} (pid {holder.pid} on {holder.host} stops it)")


def create(
    file: Annotated[Path, typer.Argument(help="Experiment file (.toml, .yaml, .json or .experiment.md).")],
    store: StoreOpt = None,
    run_id: Annotated[str | None, typer.Option("--run-id", help="The new run's id.")] = None,
    as_json: JsonListOpt = False,
    allow_large: Annotated[
        bool, typer.Option("--allow-large", help="Confirm a run of more than 1,000,000 trials.")
    ] = False,
) -> None:
    """Register an experiment without running it: a pending run, started by `engine run --resume`."""
    _create(file, store_path(store), run_id, as_json, allow_large)


def _create(file: Path, store: Path, run_id: str | None, as_json: bool, allow_large: bool) -> None:
    import json

    from engine.api import new_run_id
    from engine.cli.hints import hint, labelled
    from engine.input.loader import load_plan
    from engine.input.preflight import check_environment
    from engine.input.run_size import check_size, describe_size
    from engine.runtime.create import create_run
    from engine.store.open import open_event_log

    plan = load_plan(file)  # every check `engine run` makes, before the store is touched
    check_size(plan, allow_large)
    check_environment(plan)
    spec = plan.spec
    rid = run_id or new_run_id()
    with open_event_log(made_store(store)) as log:  # created if new, like `engine run` does
        create_run(log, spec, rid, plan.source, plan.warnings)
    if as_json:
        typer.echo(json.dumps({"run_id": rid, "experiment": spec.name, "status": "pending"}))
        return
    typer.echo(f"created run {rid} ({spec.name})")
    typer.echo(f"  {describe_size(plan)}")
    typer.echo("\n".join(labelled("start it with", hint("run", "--resume", rid, store=store))))


def validate(
    file: Annotated[Path, typer.Argument(help="Experiment file (.toml, .yaml, .json or .experiment.md).")],
) -> None:
    """Check an experiment file without running it."""
    from engine.cli.wrap import fold
    from engine.input.decidable import announce
    from engine.input.loader import load_plan
    from engine.input.preflight import check_environment, warn_free_race, warn_unscorable
    from engine.input.run_size import describe_size
    from engine.input.sandbox_check import describe_sandboxes

    plan = load_plan(file)
    check_environment(plan)
    warn_unscorable(plan)
    warn_free_race(plan)
    decidable = announce(plan)
    typer.echo(f"{file}: ok")
    typer.echo(f"  {describe_size(plan)}")  # a line of its own: a long path and the size fit 100 columns
    typer.echo(fold(f"  {decidable}"))
    sandboxed = describe_sandboxes(plan)
    if sandboxed is not None:
        typer.echo(f"  {sandboxed}")
