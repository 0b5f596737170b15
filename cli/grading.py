"""`engine label`, `judge-audit` and `regrade`: people's verdicts, the judge's consistency (printed
here), and new grading rounds of a run's stored outputs."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from engine.cli.options import JsonListOpt, JsonOpt, StoreOpt, open_log
from engine.errors import InputError


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


def label_command(
    log: Any, run_id: str, trial: list[str], from_file: Path | None, note: str, score: float | None, by: str
) -> None:
    from engine.input.labels_file import read_label_rows
    from engine.runtime.label_record import record_labels

    if from_file is not None:
        if trial:
            raise InputError("engine label", "--from", "give a file or CASE VARIANT REPEAT VERDICT, not both")
        rows = read_label_rows(from_file)
    else:
        rows = [("engine label", _trial_row(trial, note, score, by))]
    count = record_labels(log, run_id, rows)
    typer.echo(f"{count} label{'s' if count != 1 else ''} recorded for run {run_id}")


def _trial_row(trial: list[str], note: str, score: float | None, by: str) -> Any:
    from engine.input.labels_file import LabelRow

    if len(trial) != 4:
        raise InputError("engine label", "TRIAL", "expected CASE VARIANT REPEAT pass|fail (or --from FILE)")
    case, variant, repeat, verdict = trial
    if not repeat.isdigit() or int(repeat) < 1:
        raise InputError("engine label", "REPEAT", f"expected a whole number from 1, got {repeat!r}")
    return LabelRow(
        case=case, variant=variant, repeat=int(repeat), verdict=verdict, note=note, score=score, by=by
    )


def print_audit(audit: Any, as_json: bool) -> None:
    if as_json:
        import msgspec

        sys.stdout.buffer.write(msgspec.json.encode(audit) + b"\n")
        return
    from engine.cli.render import print_table

    header = ["judge", "outputs", "same score", "mean change", "max change", "pass flips", "unreadable"]
    rows = [
        [j.grader, str(j.sampled), str(j.same_score), _num(j.mean_abs_change), _num(j.max_abs_change),
         str(j.pass_flips), str(j.unparseable)]
        for j in audit.judges
    ]  # fmt: skip
    title = f"judge audit of run {audit.run_id} (scores on 0-1)"
    print_table(title, header, rows)
    if audit.people is None:
        return
    from engine.presentation import labels_view

    rows = labels_view.label_rows(audit.people)
    print_table(labels_view.TITLE, labels_view.LABELS_HEADER, rows, left=labels_view.TEXT_COLUMNS)
    for line in labels_view.label_lines(audit.people):
        print(f"  {line}")


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"
