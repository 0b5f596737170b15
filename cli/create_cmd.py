"""`engine create FILE`: register an experiment as a pending run, to start later with --resume."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from engine.cli.hints import hint
from engine.store.log.event_log import EventLog


def create_command(file: Path, store: Path, run_id: str | None, as_json: bool, allow_large: bool) -> None:
    from engine.api import new_run_id
    from engine.input.loader import load_plan
    from engine.input.preflight import check_environment
    from engine.input.run_size import check_size, describe_size
    from engine.runtime.create import create_run

    plan = load_plan(file)  # every check `engine run` makes, before the store is touched
    check_size(plan, allow_large)
    check_environment(plan)
    spec = plan.spec
    rid = run_id or new_run_id()
    with EventLog(store) as log:  # created if new, like `engine run` does
        create_run(log, spec, rid, plan.source, plan.warnings)
    if as_json:
        typer.echo(json.dumps({"run_id": rid, "experiment": spec.name, "status": "pending"}))
        return
    typer.echo(f"created run {rid} ({spec.name})")
    typer.echo(f"  {describe_size(plan)}")
    typer.echo(f"start it with: {hint('run', '--resume', rid, store=store)}")
