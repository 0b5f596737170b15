"""`engine run`, `replay` and `report`: a run made, rebuilt from its log, and its report shown.
Heavy imports happen inside the commands, so `--help` and the other commands' start stay fast."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from engine.cli.options import JsonOpt, StoreOpt, format_choices, output_file, store_path

if TYPE_CHECKING:
    from engine.input.experiment_plan import ExperimentPlan


def run(
    file: Annotated[
        Path | None,
        typer.Argument(
            help="Experiment file (.toml, .yaml, .json or .experiment.md); default engine.toml, "
            "engine.yaml or .engine/config.toml."
        ),
    ] = None,
    store: StoreOpt = None,
    resume: Annotated[str | None, typer.Option("--resume", help="Resume an interrupted run.")] = None,
    run_id: Annotated[
        str | None, typer.Option("--run-id", help="Name the run (re-running it resumes).")
    ] = None,
    as_json: JsonOpt = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    schedule: Annotated[
        str | None, typer.Option("--schedule", help="Stay alive and run on this cron schedule ('0 3 * * *').")
    ] = None,
    case: Annotated[
        list[str] | None, typer.Option("--case", help="Only cases whose id matches this glob (repeatable).")
    ] = None,
    variant: Annotated[
        list[str] | None, typer.Option("--variant", help="Only this variant (repeatable; first = baseline).")
    ] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Override the experiment's seed.")] = None,
    max_experiments: Annotated[
        int | None, typer.Option("--max-experiments", help="Tuning: variations this session (overrides).")
    ] = None,
    repeats: Annotated[
        int | None,
        typer.Option("--repeats", help="Repeats per case (overrides; a rerun of one measured with more)."),
    ] = None,
    allow_large: Annotated[
        bool, typer.Option("--allow-large", help="Confirm a run of more than 1,000,000 trials.")
    ] = False,
    reuse: Annotated[
        str | None,
        typer.Option(
            "--reuse", metavar="[=RUN]",
            help="Take outputs of earlier runs for requests they already sent (alone: any run of the "
            "store; --reuse=RUN: that run's only; 'last': the latest run of this experiment).",
        ),
    ] = None,
    no_reuse: Annotated[
        bool, typer.Option("--no-reuse", help="Send every trial, whatever the file's [reuse] says.")
    ] = False,
) -> None:
    """Run an experiment or tuning session to completion, show progress, print and store the report.

    With --schedule (or an enabled [schedule] table) the process stays alive and runs a session at
    every cron fire, never two at once; SIGINT/SIGTERM stop it gracefully.
    """
    from engine.cli.run.schedule import schedule_command
    from engine.cli.run.session import default_experiment, run_command
    from engine.input.narrow import Narrowing

    if no_reuse and reuse is not None:
        from engine.errors import InputError

        raise InputError("engine run", "--no-reuse", "expected --reuse or --no-reuse, not both")
    if file is None and resume is None:  # the project's default experiment, if it has one
        file = default_experiment(Path.cwd())
    narrowing = Narrowing(
        cases=case or [], variants=variant or [], seed=seed, max_experiments=max_experiments, repeats=repeats,
        reuse="off" if no_reuse else reuse,
    )  # fmt: skip
    if schedule is not None:
        raise typer.Exit(schedule_command(file, store_path(store), schedule, narrowing))
    plan = _load_plan(file) if resume is None and file is not None else None
    if plan is not None and plan.spec.schedule is not None and plan.spec.schedule.enabled:
        raise typer.Exit(schedule_command(file, store_path(store), None, narrowing, plan))
    code = run_command(file, store_path(store), resume, run_id, as_json, quiet, narrowing, allow_large, plan)
    raise typer.Exit(code)


def _load_plan(file: Path) -> ExperimentPlan:
    """The file's plan; its warnings are said once it loads (a file refused says its one line alone)."""
    import warnings

    from engine.input.loader import load_plan

    with warnings.catch_warnings(record=True) as said:
        plan = load_plan(file)
    for warning in said:
        warnings.showwarning(warning.message, warning.category, warning.filename, warning.lineno)
    return plan


def replay(
    run_id: Annotated[str | None, typer.Argument(help="Run id (default: the latest run).")] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Rebuild a run's report from the log alone (a .bundle file in place of RUN_ID: from its events)."""
    from engine.cli.render import print_report
    from engine.cli.store.bundles import run_source
    from engine.views.queries import replay_json

    with run_source(store_path(store), run_id) as (log, rid):
        data = replay_json(log, rid)
    print_report(data, as_json)


def report(
    run_id: Annotated[
        str | None, typer.Argument(help="Run id (default: the latest run), or a .bundle file.")
    ] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
    markdown: Annotated[
        bool, typer.Option("--markdown", help="Print GitHub-flavoured Markdown (CI step summaries).")
    ] = False,
    html: Annotated[
        Path | None, typer.Option("--html", help="Write a self-contained HTML report to FILE.")
    ] = None,
    fmt: Annotated[
        str | None, typer.Option(
            "--format",
            help=f"{format_choices('report', 'markdown | html | json')} (to stdout, or --out FILE).",
        )
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write the --format output to FILE.")
    ] = None,
    grading: Annotated[
        int | None, typer.Option("--grading", help="Grading round N (0: the run's own; default: the latest).")
    ] = None,
) -> None:
    """Show the report stored at the end of a run (rebuilt from the log if the run never finished)."""
    from engine.cli.render import print_report
    from engine.errors import InputError
    from engine.views.current_report import current_report_json

    if as_json + markdown + (html is not None) + (fmt is not None) > 1:
        raise InputError("engine report", "options", "only one of --json, --markdown, --html FILE, --format")
    if fmt is not None:  # the formats' registry (its plugins' entry points) only when one is asked for
        from engine.presentation.formats import FORMATS

        if not FORMATS.has(fmt, "report"):
            expected = f"expected one of {', '.join(FORMATS.names('report'))}"
            raise InputError("engine report", "--format", expected)
    from engine.cli.store.bundles import run_source

    fmt, out = ("markdown", out) if markdown else ("html", html) if html is not None else (fmt, out)
    out = output_file(out, "engine report", "--html" if html is not None else "--out")
    with run_source(store_path(store), run_id) as (log, rid):
        data = current_report_json(log, rid, grading)  # stored while current, else built
        extra = {}
        if fmt == "html":  # the HTML file carries the outputs too: it is read without a server
            from engine.presentation.html_file import file_matrix

            extra = {"matrix": file_matrix(log, rid, data)}
    if as_json or fmt == "json":  # the stored bytes themselves: replay reproduces them exactly
        if out is None:
            print_report(data, as_json=True)
        else:
            out.write_bytes(data + b"\n")
        return
    if fmt is None:
        print_report(data, as_json=False)
        return
    from engine.presentation.formats import render_report
    from engine.presentation.model import as_report

    text = render_report(fmt, as_report(data), **extra)
    if out is None:
        sys.stdout.buffer.write(text.encode())
    else:
        out.write_text(text, encoding="utf-8")
        typer.echo(str(out))
