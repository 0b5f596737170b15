"""`engine label`, `judge-audit` and `regrade`: people's verdicts, the judge's consistency, and new
grading rounds of a run's stored outputs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from engine.cli.options import JsonListOpt, JsonOpt, StoreOpt, open_log


def label(
    run_id: Annotated[str, typer.Argument(help="Run id.")],
    trial: Annotated[
        list[str] | None, typer.Argument(help="CASE VARIANT REPEAT pass|fail (REPEAT counts from 1).")
    ] = None,
    from_file: Annotated[
        Path | None,
        typer.Option("--from", help="CSV or JSON lines: case, variant, repeat, verdict (note, score, by)."),
    ] = None,
    note: Annotated[str, typer.Option("--note", help="Why (kept with the label).")] = "",
    score: Annotated[float | None, typer.Option("--score", help="A score from 0 to 1, too.")] = None,
    by: Annotated[str, typer.Option("--by", help="Who labels (default: the user name).")] = "",
    store: StoreOpt = None,
) -> None:
    """A person's verdict on a trial's output; judges are measured against these labels (safe while
    the run goes on; the latest label of an output wins)."""
    from engine.cli.labels_cmd import label_command
    from engine.views.queries import resolve_run

    with open_log(store, write=True) as log:
        label_command(log, resolve_run(log, run_id), trial or [], from_file, note, score, by)


def judge_audit(
    run_id: Annotated[str, typer.Argument(help="Run id.")],
    sample: Annotated[int, typer.Option(help="Outputs to judge again (a seeded sample).")] = 20,
    store: StoreOpt = None,
    as_json: JsonListOpt = False,
) -> None:
    """Ask the run's judge again about a sample of its outputs: how often does its verdict change?"""
    import trio

    from engine.cli.history_cmd import print_audit
    from engine.runtime.judge_audit import judge_audit as audit
    from engine.views.queries import resolve_run

    with open_log(store) as log:
        result = trio.run(audit, log, resolve_run(log, run_id), max(1, sample))
    print_audit(result, as_json)


def regrade(
    run_id: Annotated[str, typer.Argument(help="Run id.")],
    graders: Annotated[
        Path | None, typer.Option("--graders", help="File with [[graders]] (and [scoring]) to apply.")
    ] = None,
    labels: Annotated[
        bool,
        typer.Option("--labels", help="A round from people's labels (the rest keep the judges' verdicts)."),
    ] = False,
    name: Annotated[
        str | None, typer.Option("--name", help="Name this grading round (default: the graders file's name).")
    ] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Grade a run's stored outputs again, as a new named grading round; the subject is not called.

    Earlier rounds stay readable: `engine report RUN --grading N` (0 is the run's own grading).
    """
    from engine.errors import InputError

    if labels == (graders is not None):
        raise InputError("engine regrade", "--graders", "give a graders file or --labels (one of the two)")
    if labels:
        _label_round(run_id, name, store, as_json)
        return
    assert graders is not None
    import functools

    import trio

    from engine.cli.render import print_report
    from engine.events.codec import to_json
    from engine.input.loader import load_graders
    from engine.runtime.regrade import regrade_run
    from engine.views.queries import resolve_run

    specs, threshold = load_graders(graders)
    with open_log(store, write=True) as log:
        rid = resolve_run(log, run_id)
        regrade = functools.partial(regrade_run, name=name or graders.stem)
        report_obj = trio.run(regrade, log, rid, specs, threshold)
    print_report(to_json(report_obj), as_json)


def _label_round(run_id: str, name: str | None, store: Path | None, as_json: bool) -> None:
    import trio

    from engine.cli.render import print_report
    from engine.events.codec import to_json
    from engine.runtime.label_round import label_round
    from engine.views.queries import resolve_run
    from engine.views.report_labels import with_labels

    with open_log(store, write=True) as log:
        rid = resolve_run(log, run_id)
        report_obj = trio.run(label_round, log, rid, name or "")
        data = with_labels(log, rid, to_json(report_obj))
    print_report(data, as_json)
