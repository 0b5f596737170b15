"""`engine` commands. Heavy imports (trio, lmdb, httpx) happen inside commands so `--help` is fast."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from engine.input.experiment_plan import ExperimentPlan

APP_SETTINGS: dict[str, Any] = {
    "no_args_is_help": True,
    "add_completion": False,
    "pretty_exceptions_enable": False,
    "help": "Event-sourced experiments engine for LLM agents.",
    # plain help text: rich markup would swallow "[schedule]" and other TOML table names
    "rich_markup_mode": None,
}
app = typer.Typer(**APP_SETTINGS)

StoreOpt = Annotated[
    Path | None, typer.Option("--store", help="Store directory (default ./.engine or $ENGINE_STORE).")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the report as JSON.")]
JsonListOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]


def store_path(store: Path | None) -> Path:
    return store or Path(os.environ.get("ENGINE_STORE") or ".engine")


def open_log(store: Path | None, write: bool = False) -> Any:
    """The store, read-only unless the command writes; decoding damage inside the block is reported
    as damage (see cli.store_open)."""
    from engine.cli.store_open import open_store

    return open_store(store_path(store), write)


@app.command()
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
) -> None:
    """Run an experiment or tuning session to completion, show progress, print and store the report.

    With --schedule (or an enabled [schedule] table) the process stays alive and runs a session at
    every cron fire, never two at once; SIGINT/SIGTERM stop it gracefully.
    """
    from engine.cli.run_cmd import default_experiment, run_command, schedule_command
    from engine.input.narrow import Narrowing

    if file is None and resume is None:  # the project's default experiment, if it has one
        file = default_experiment(Path.cwd())
    narrowing = Narrowing(
        cases=case or [], variants=variant or [], seed=seed, max_experiments=max_experiments, repeats=repeats
    )
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


@app.command()
def replay(
    run_id: Annotated[str | None, typer.Argument(help="Run id (default: the latest run).")] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Rebuild a run's report from the log alone (a .bundle file in place of RUN_ID: from its events)."""
    from engine.cli.bundle_cmd import run_source
    from engine.cli.render import print_report
    from engine.views.queries import replay_json

    with run_source(store_path(store), run_id) as (log, rid):
        data = replay_json(log, rid)
    print_report(data, as_json)


@app.command()
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
        str | None, typer.Option("--format", help="markdown | html | json (to stdout, or --out FILE).")
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
    from engine.presentation.formats import FORMATS, render_report
    from engine.presentation.model import as_report
    from engine.views.current_report import current_report_json

    if as_json + markdown + (html is not None) + (fmt is not None) > 1:
        raise InputError("engine report", "options", "only one of --json, --markdown, --html FILE, --format")
    if fmt is not None and not FORMATS.has(fmt, "report"):
        raise InputError("engine report", "--format", f"expected one of {', '.join(FORMATS.names('report'))}")
    from engine.cli.bundle_cmd import run_source
    from engine.presentation.html_file import file_matrix

    fmt, out = ("markdown", out) if markdown else ("html", html) if html is not None else (fmt, out)
    with run_source(store_path(store), run_id) as (log, rid):
        data = current_report_json(log, rid, grading)  # stored while current, else built
        # the HTML file carries the outputs too: it is read without a server
        extra = {"matrix": file_matrix(log, rid, data)} if fmt == "html" else {}
    if as_json or fmt == "json":  # the stored bytes themselves: replay reproduces them exactly
        if out is None:
            print_report(data, as_json=True)
        else:
            out.write_bytes(data + b"\n")
        return
    if fmt is None:
        print_report(data, as_json=False)
        return
    text = render_report(fmt, as_report(data), **extra)
    if out is None:
        sys.stdout.buffer.write(text.encode())
    else:
        out.write_text(text, encoding="utf-8")
        typer.echo(str(out))


@app.command("list")
def list_cmd(store: StoreOpt = None, as_json: JsonListOpt = False) -> None:
    """List runs in the store."""
    from engine.cli.render import print_runs
    from engine.runtime.run_status import list_runs

    with open_log(store) as log:
        print_runs(list_runs(log), as_json)


@app.command()
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


@app.command()
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


@app.command()
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
    from engine.cli.create_cmd import create_command

    create_command(file, store_path(store), run_id, as_json, allow_large)


@app.command()
def validate(
    file: Annotated[Path, typer.Argument(help="Experiment file (.toml, .yaml, .json or .experiment.md).")],
) -> None:
    """Check an experiment file without running it."""
    from engine.cli.wrap import fold
    from engine.input.decidable import announce
    from engine.input.loader import load_plan
    from engine.input.preflight import check_environment, warn_free_race, warn_unscorable
    from engine.input.run_size import describe_size

    plan = load_plan(file)
    check_environment(plan)
    warn_unscorable(plan)
    warn_free_race(plan)
    decidable = announce(plan)
    typer.echo(f"{file}: ok")
    typer.echo(f"  {describe_size(plan)}")  # a line of its own: a long path and the size fit 100 columns
    typer.echo(fold(f"  {decidable}"))


@app.command()
def compare(
    base: Annotated[
        str, typer.Argument(help="Baseline run id, or last-green: the candidate experiment's last green run.")
    ],
    candidate: Annotated[str, typer.Argument(help="Candidate run id.")],
    store: StoreOpt = None,
    gate: Annotated[bool, typer.Option("--gate", help="Exit 1 when the candidate regressed.")] = False,
    as_json: JsonOpt = False,
    same_cases: Annotated[
        bool, typer.Option("--require-same-cases", help="Refuse (exit 2) when the case sets differ.")
    ] = False,
    max_pass_rate_drop: Annotated[float | None, typer.Option(help="Absolute pass-rate drop allowed.")] = None,
    max_mean_score_drop: Annotated[
        float | None, typer.Option(help="Absolute mean-score drop allowed.")
    ] = None,
    max_error_rate_increase: Annotated[
        float | None, typer.Option(help="Absolute rise of errors per trial allowed.")
    ] = None,
    max_p95_latency_increase: Annotated[
        float | None, typer.Option(help="Relative p95 increase allowed.")
    ] = None,
    max_cost_increase: Annotated[float | None, typer.Option(help="Relative cost increase allowed.")] = None,
    base_variant: Annotated[
        str | None, typer.Option("--base-variant", help="Compare this variant of BASE (with --variant).")
    ] = None,
    variant: Annotated[
        str | None, typer.Option("--variant", help="...against this variant of CAND; BASE may equal CAND.")
    ] = None,
    from_dir: Annotated[
        str | None,
        typer.Option(
            "--from", help="With last-green: also look in this directory (or URL) of .bundle files."
        ),
    ] = None,
    no_baseline_ok: Annotated[
        bool,
        typer.Option(
            "--no-baseline-ok", help="With last-green: no green run yet is not an error (a first run)."
        ),
    ] = False,
) -> None:
    """Compare two runs metric by metric; with --gate, exit 1 on a regression, 2 when they share no case.

    `engine compare RUN RUN --base-variant A --variant B` compares two experiments of one run."""
    import msgspec

    from engine.cli.compare_cmd import print_comparison
    from engine.runtime.run_status import run_state
    from engine.views.compare import compare_runs
    from engine.views.queries import resolve_run

    overrides = {
        "max_pass_rate_drop": max_pass_rate_drop,
        "max_mean_score_drop": max_mean_score_drop,
        "max_error_rate_increase": max_error_rate_increase,
        "max_p95_latency_increase": max_p95_latency_increase,
        "max_cost_increase": max_cost_increase,
    }
    pair = _variant_pair(base_variant, variant)  # a mistake on the command line before the store
    with open_log(store) as log:
        cand_id = resolve_run(log, candidate)
        spec = run_state(log, cand_id).spec
        assert spec is not None
        if base == "last-green":
            found = _last_green(log, spec.name, cand_id, from_dir, required=not no_baseline_ok)
            if found is None:
                typer.echo(f"no green run of {spec.name!r} yet: nothing to gate {cand_id} against")
                if _own_verdict_not_green(log, cand_id):
                    typer.echo(NOT_GREEN_NOTE)
                    from engine.cli.hints import hint

                    typer.echo(hint("mark", cand_id, "green", store=store))
                return
            source, base_id = found
        else:
            source, base_id = log, resolve_run(log, base)
        gate_spec = msgspec.structs.replace(
            spec.gate, **{k: v for k, v in overrides.items() if v is not None}
        )
        result = compare_runs(
            source, base_id, cand_id, gate_spec, require_same_cases=same_cases, variants=pair
        )
    print_comparison(result, as_json)
    if gate and result.nothing_to_compare:  # not a pass: a gate that compared nothing must not go green
        raise typer.Exit(2)
    if gate and result.regressed:
        raise typer.Exit(1)


@app.command("import")
def import_cmd(
    files: Annotated[
        list[str], typer.Argument(help="Bundle files or URLs (from engine export --format bundle).")
    ],
    store: StoreOpt = None,
    as_id: Annotated[str | None, typer.Option("--as", help="Import the run under this id instead.")] = None,
) -> None:
    """Add bundled runs to the store; a bundle already there adds nothing."""
    from engine.cli.bundle_cmd import import_command

    import_command(files, store_path(store), as_id)


NOT_GREEN_NOTE = (
    "note: this run will not be a baseline either: a candidate significantly worse than its baseline (or\n"
    "  with more errors) keeps a run from going green; mark a run green to gate against it:"
)


def _own_verdict_not_green(log: Any, run_id: str) -> bool:
    """The candidate completed, yet is not green: say why no baseline will ever appear by itself."""
    from engine.runtime.run_status import summarize
    from engine.views.history import history

    summary = summarize(log, run_id)
    point = next((p for p in history(log, summary.experiment) if p.run_id == run_id), None)
    return point is not None and point.status == "completed" and not point.green


def _last_green(
    log: Any, experiment: str, cand_id: str, from_dir: str | None, required: bool
) -> tuple[Any, str] | None:
    """(a store holding the base and the candidate, the base's id); None when there is none and
    none is required."""
    from engine.errors import InputError
    from engine.views.bundle_sources import last_green_anywhere

    found = last_green_anywhere(log, experiment, cand_id, from_dir)
    if found is None and required:
        where = f" (nor among the bundles in {from_dir})" if from_dir else ""
        raise InputError("engine compare", "BASE", f"no green run of {experiment!r} before {cand_id}{where}: "
                         "mark one with `engine mark RUN green`")  # fmt: skip
    return found


@app.command()
def history(
    experiment: Annotated[str, typer.Argument(help="Experiment name (its `name` field).")],
    metric: Annotated[
        str, typer.Option(help="pass_rate | mean_score | cost_usd | p95_latency_ms.")
    ] = "pass_rate",
    variant: Annotated[str | None, typer.Option(help="Whose figures (default: each run's baseline).")] = None,
    store: StoreOpt = None,
    as_json: JsonListOpt = False,
) -> None:
    """A metric over every run of one experiment, oldest first, with a sparkline and the green runs."""
    from engine.cli.history_cmd import print_history

    with open_log(store) as log:
        print_history(log, experiment, metric, variant, as_json)


@app.command()
def mark(
    run_id: Annotated[str, typer.Argument(help="Run id.")],
    verdict: Annotated[str, typer.Argument(help="green (a baseline for last-green) or red (never one).")],
    store: StoreOpt = None,
) -> None:
    """Mark a run green or red: `engine compare last-green RUN` takes the newest green run."""
    from engine.runtime.run_mark import mark_run
    from engine.views.queries import resolve_run

    with open_log(store, write=True) as log:
        rid = resolve_run(log, run_id)
        mark_run(log, rid, verdict, by=f"cli pid {os.getpid()}")
    typer.echo(f"run {rid} marked {verdict}")


@app.command()
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


@app.command("judge-audit")
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


@app.command()
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


@app.command()
def export(
    run_id: Annotated[str | None, typer.Argument(help="Run id (default: the latest run).")] = None,
    store: StoreOpt = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="jsonl | junit | rundir | bundle.")] = "jsonl",
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

    with open_log(store) as log:
        target = out if fmt == "bundle" or out is None else Path(out)  # a bundle may go to a URL
        export_run(log, resolve_run(log, run_id), fmt, target, to_stdout)
    sys.stdout.flush()
    if out is not None:
        typer.echo(out)


@app.command()
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


@app.command()
def best(store: StoreOpt = None, as_json: JsonListOpt = False) -> None:
    """The best accepted variation per parameter across all tuning sessions."""
    from engine.cli.render import print_best
    from engine.store.projections.best import best_variations

    with open_log(store) as log:
        print_best(best_variations(log), as_json)


@app.command()
def check(
    run_id: Annotated[str | None, typer.Argument(help="Only this run (default: everything).")] = None,
    store: StoreOpt = None,
) -> None:
    """Read the whole store: pages, every event, the run index, every blob's content hash.

    Exit 0 when it is clean, 2 when damage was found (each problem is listed).
    """
    from engine.cli.store_cmd import check_command

    raise typer.Exit(check_command(store_path(store), run_id))


@app.command()
def backup(
    dest: Annotated[Path, typer.Argument(help="A new (or empty) folder for the copy.")],
    store: StoreOpt = None,
) -> None:
    """Copy the store (compacted, consistent even while a run writes) into DEST."""
    from engine.cli.store_cmd import backup_command

    backup_command(store_path(store), dest)


@app.command()
def rebuild(store: StoreOpt = None) -> None:
    """Fold every run's kept projections (summaries, report state) again from the log."""
    from engine.cli.store_cmd import rebuild_command

    rebuild_command(store_path(store))


@app.command()
def serve(
    store: StoreOpt = None,
    host: Annotated[
        str, typer.Option("--host", help="Address to bind (beyond localhost: needs a token).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port (0: any free port; the URL is printed).")] = 8765,
    open_browser: Annotated[bool, typer.Option("--open", help="Open the runs page in a browser.")] = False,
    token: Annotated[
        str | None,
        typer.Option(
            "--token", help="Require this token (?token=T or Authorization: Bearer T); `ps` shows it."
        ),
    ] = None,
    token_file: Annotated[
        Path | None,
        typer.Option(
            "--token-file", help="Read the token from this file's first line (or set ENGINE_SERVE_TOKEN)."
        ),
    ] = None,
    allow_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-host",
            help="Also answer requests whose Host header names HOST (repeatable; loopback names always; "
            "'*': any). Needed with --host 0.0.0.0.",
        ),
    ] = None,
    bundle: Annotated[
        str | None, typer.Option("--bundle", help="Serve the run in this .bundle file (no store needed).")
    ] = None,
) -> None:
    """A live web view of runs, trials and comparisons; runs may go on beside it. Read-only, but with
    a token people may label trials' outputs (the labels are events in the store)."""
    from engine.web.server import check_bind, resolve_token, run_server

    secret = resolve_token(token, token_file)
    check_bind(host, secret, allow_host)
    if bundle is not None:
        from engine.views.bundle_sources import open_bundle_store

        source = open_bundle_store(bundle)[0]
        run_server(
            source, host, port, secret, open_browser, allow_host, label=f"bundle {bundle}", labels=False
        )
        return
    path = store_path(store)
    run_server(path, host, port, secret, open_browser, allow_host)


def main() -> None:
    """Console entry point: every error is one `error: ...` line, user errors exit 2, no traceback."""
    from engine.cli.usage import click_exceptions, usage_line

    _plain_input_warnings()
    click = click_exceptions()
    try:
        # usage errors come back here, to be told as one line
        code = command_app(sys.argv)(standalone_mode=False)
    except getattr(click, "NoArgsIsHelpError", ()) as exc:  # bare `engine`: the command list (click 8.2+)
        exc.show()
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        print(f"error: {usage_line(exc)}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except typer.Abort:
        print("error: aborted", file=sys.stderr)
        sys.exit(1)
    except Exception as exc:
        found = _exit_and_line(exc)
        if found is None:
            raise
        code, line = found
        print(f"error: {line}", file=sys.stderr)
        sys.exit(code)
    sys.exit(code if isinstance(code, int) else 0)


def command_app(argv: list[str]) -> typer.Typer:
    """The app with only the command asked for: typer reads every command's signature and options at
    each start (tens of ms for all of them), and `engine list` should not pay for `engine serve`'s.
    Anything else (no command, `--help`, a misspelt one) gets the whole app, for its list and hints."""
    asked = argv[1] if len(argv) > 1 else ""
    chosen = [info for info in app.registered_commands if _command_name(info) == asked]
    if not chosen:
        return app
    one = typer.Typer(**APP_SETTINGS)
    one.registered_commands = chosen
    one.callback()(_one_command_group)
    return one


def _command_name(info: Any) -> str:
    return info.name or info.callback.__name__.lower().replace("_", "-")


def _one_command_group() -> None:
    """With a single command and no callback typer makes that command the program itself (`engine
    FILE`); a callback keeps the group, so `engine run FILE` parses as it always does."""


def _exit_and_line(exc: Exception) -> tuple[int, str] | None:
    """An engine error says its own exit code; an I/O failure (a full disk: what was committed
    stays, and the run resumes) exits 1; anything else (None) is a bug, shown with its traceback."""
    from engine.errors import find_error
    from engine.events.errors import EngineError

    found = find_error(exc, EngineError)
    if isinstance(found, EngineError):
        return found.exit_code, str(found)
    io_error = find_error(exc, OSError)
    if io_error is not None:
        return 1, f"I/O error: {io_error}"
    return None


def _variant_pair(base: str | None, candidate: str | None) -> tuple[str, str] | None:
    if base is None and candidate is None:
        return None
    if base is None or candidate is None:
        from engine.errors import InputError

        given = "--variant" if base is None else "--base-variant"
        raise InputError("engine compare", given, "expected --base-variant A and --variant B together")
    return base, candidate


def _plain_input_warnings() -> None:
    """An InputWarning is one `warning: FILE: FIELD: ...` line on stderr, not Python's source excerpt."""
    import warnings

    from engine.errors import InputWarning

    python_format = warnings.formatwarning

    def format_warning(message: Warning | str, category: type[Warning], *rest: Any, **kw: Any) -> str:
        if issubclass(category, InputWarning):
            from engine.cli.wrap import fold

            return fold(f"warning: {message}") + "\n"
        return python_format(message, category, *rest, **kw)

    warnings.formatwarning = format_warning  # type: ignore[assignment]


if __name__ == "__main__":
    main()
