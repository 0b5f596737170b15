"""`engine promote` and `best`: a run's winner written into a config file, tuning's best variations."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from engine.cli.options import JsonListOpt, StoreOpt, open_log


def promote(
    run_id: Annotated[str, typer.Argument(help="Run id.")],
    variant: Annotated[str | None, typer.Argument(help="Variant (default: the run's winner).")] = None,
    to: Annotated[
        Path, typer.Option("--to", help="Config file to write (.toml edited in place, or .json).")
    ] = Path("agent.toml"),
    force: Annotated[bool, typer.Option("--force", help="Promote a winner that is not significant.")] = False,
    store: StoreOpt = None,
    as_json: JsonListOpt = False,
) -> None:
    """Write a variant's params, flags, model and system prompt into a config file."""
    import msgspec

    from engine.views.promote import describe_promotion
    from engine.views.promote import promote as promote_variant
    from engine.views.queries import resolve_run

    with open_log(store) as log:
        written = promote_variant(log, resolve_run(log, run_id), variant, to, force)
    if as_json:
        sys.stdout.buffer.write(msgspec.json.encode(written) + b"\n")
    else:
        typer.echo(describe_promotion(written))


def best(store: StoreOpt = None, as_json: JsonListOpt = False) -> None:
    """The best accepted variation per parameter across all tuning sessions."""
    from engine.cli.render import print_best
    from engine.store.projections.best import best_variations

    with open_log(store) as log:
        print_best(best_variations(log), as_json)
