"""What `engine list`, `status` and `history` do once their arguments are known. The typer commands
(cli.lifecycle_commands, cli.compare_commands) and the typer-free path (cli.fast_reads) both call
these, so the two cannot drift apart in what they print."""

from __future__ import annotations

from pathlib import Path

from engine.cli.store_arg import open_log


def list_runs(store: Path | None = None, as_json: bool = False) -> None:
    from engine.cli.render import print_runs
    from engine.runtime.run_status import list_runs as summaries

    with open_log(store) as log:
        print_runs(summaries(log), as_json)


def run_status(run_id: str | None = None, store: Path | None = None, as_json: bool = False) -> None:
    import time

    from engine.cli.render import print_status
    from engine.runtime.run_status import run_status as figures
    from engine.views.queries import resolve_run

    with open_log(store) as log:
        rid = resolve_run(log, run_id)
        print_status(figures(log, rid, time.time()), as_json)


def history(
    experiment: str,
    metric: str = "pass_rate",
    variant: str | None = None,
    store: Path | None = None,
    as_json: bool = False,
    every: bool = False,
) -> None:
    from engine.cli.history_cmd import print_history

    with open_log(store) as log:
        print_history(log, experiment, metric, variant, as_json, every)
