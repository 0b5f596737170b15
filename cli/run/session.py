"""`engine run` from the shell: load, run with a progress bar, print the report, the next steps and
the exit code."""

from __future__ import annotations

import sys
from pathlib import Path

import trio

from engine.cli.hints import hint, labelled
from engine.cli.options import made_store
from engine.cli.run.progress import show_progress
from engine.cli.run.stopping import NOTE_RUN, signal_exit_code, stop_on_signals
from engine.errors import InputError
from engine.events import kinds as k
from engine.events.report import RunReport
from engine.input.experiment_plan import ExperimentPlan
from engine.input.narrow import Narrowing, narrow
from engine.input.shared_cases import share_empty_collections

# the project's default experiment when `engine run` names none, in this order
DEFAULT_FILES = ("engine.toml", "engine.yaml", ".engine/config.toml")


def default_experiment(cwd: Path) -> Path | None:
    """engine's own default file, else an AgentV project's `experiments.default`."""
    from engine.input.compat.agentv_project import default_experiment as agentv_default

    own = next((cwd / name for name in DEFAULT_FILES if (cwd / name).is_file()), None)
    return own if own is not None else agentv_default(cwd)


def run_command(
    file: Path | None,
    store: Path,
    resume: str | None,
    run_id: str | None,
    as_json: bool,
    quiet: bool,
    narrowing: Narrowing | None = None,
    allow_large: bool = False,
    loaded: ExperimentPlan | None = None,
) -> int:
    """`loaded`: the file's plan when the caller has loaded it already."""
    from engine.input.decidable import run_notes
    from engine.input.loader import load_plan
    from engine.input.preflight import check_environment, warn_free_race, warn_unscorable
    from engine.input.run_size import check_size

    plan: ExperimentPlan | None = None
    notes: list[str] = []
    if resume is None:
        if file is None:
            defaults = " or ".join(DEFAULT_FILES)
            raise InputError(
                "engine run", "FILE", f"expected an experiment file (or --resume RUN_ID): no {defaults} here"
            )
        plan = loaded or load_plan(file)  # bad input stops here, before the store is touched
        share_empty_collections(plan.spec)  # this process owns the plan (engine.input.shared_cases)
        if narrowing is not None:
            plan = narrow(plan, narrowing)
        check_size(plan, allow_large)
        check_environment(plan)
        warn_unscorable(plan)
        warn_free_race(plan)
        # what the plan can decide: its warnings always, the figures unless asked for quiet; not for a
        # rerun of some cases or variants (a reproducer), which decides nothing
        if narrowing is None or not (narrowing.cases or narrowing.variants):
            notes = run_notes(plan, figures=not (quiet or as_json))
    elif narrowing is not None and narrowing != Narrowing():
        raise InputError("engine run", "--resume", "a resumed run keeps its cases, variants and seed")
    source = str(file.resolve()) if file is not None else ""
    from engine.runtime.allocator import tune_allocator

    # the process is engine's own here: a host application embedding engine keeps its allocator as it is
    tune_allocator()  # before the writer's thread allocates: a long run's memory stays level
    made_store(store)  # after every check of the input: a refused run leaves no store behind
    return trio.run(_run, plan, store, resume or run_id, resume is not None, as_json, quiet, source, notes)


async def _run(
    plan: ExperimentPlan | None,
    store: Path,
    run_id: str | None,
    resume: bool,
    as_json: bool,
    quiet: bool,
    source: str,
    notes: list[str],
) -> int:
    from engine.api import SUBSCRIBER_BUFFER, new_run_id, open_engine
    from engine.cli.render import print_report
    from engine.events.codec import to_json
    from engine.input.flags import check_run_id
    from engine.runtime.runner import RunControl
    from engine.views.queries import resolve_run

    report = None
    async with open_engine(store) as eng:
        if run_id is not None and (resume or run_id in eng.log.run_ids()):
            run_id, resume = resolve_run(eng.log, run_id), True
        elif run_id is not None:
            check_run_id(run_id)  # a new run's id: before its first event
        run_id = run_id or new_run_id()  # known before the first event: a forced stop names it
        control = RunControl()
        send, receive = trio.open_memory_channel[k.Event](SUBSCRIBER_BUFFER)
        async with trio.open_nursery() as nursery:
            await nursery.start(stop_on_signals, control, nursery.cancel_scope, NOTE_RUN)
            nursery.start_soon(show_progress, receive, quiet or as_json, notes)
            report = await eng.run(
                plan, run_id=run_id, resume=resume, control=control, subscribers=[send], source=source
            )
            nursery.cancel_scope.cancel()
    if report is None:  # a second signal forced the stop: no report, the run stays resumable
        print("forced stop: the run is left interrupted; continue it with:", file=sys.stderr)
        print(f"  {hint('run', '--resume', run_id, store=store)}", file=sys.stderr)
        return signal_exit_code(control.stop_reason)
    print_report(to_json(report), as_json)
    code = exit_code(report, control.stop_reason)
    if not as_json:
        print_next_steps(report, store)
    return code


EXIT_CANCELLED = 3  # stopped by `engine cancel` (or the embedding API) before it completed


def exit_code(report: RunReport, stop_reason: str | None) -> int:
    """0 when the run ended as planned (completed, or partial on a budget); 1 when it failed (an
    unreachable target) or too many trials had no usable result (above execution.max_error_rate);
    128 + N after signal N (130 for SIGINT, as shells expect); 3 when a cancel request stopped it."""
    if report.status == "cancelled":
        return signal_exit_code(stop_reason) if stop_reason else EXIT_CANCELLED
    return 1 if report.status == "failed" or report.error_rate_exceeded else 0


def print_next_steps(report: RunReport, store: Path | None = None) -> None:
    rid = report.run_id
    lines = [f"run id: {rid}"]
    if report.status == "failed" and report.stop_reason:
        lines.append(f"failed: {report.stop_reason}")
    elif report.error_rate_exceeded:
        rate = f"{report.error_rate:.0%}" if report.error_rate is not None else "?"
        limit = f"execution.max_error_rate {report.max_error_rate:g}"
        lines.append(f"exit 1: {rate} of trials had no usable result (above {limit})")
    if report.status == "cancelled" or report.status == "running":
        lines += labelled("continue it", hint("run", "--resume", rid, store=store))
    report_it, export_it = hint("report", rid, "--markdown", store=store), hint(
        "export", rid, "--format", "jsonl", store=store
    )
    lines += labelled("next", report_it, export_it)
    print("\n".join(lines), file=sys.stderr)
