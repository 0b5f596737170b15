"""`engine compare`, `history` and `mark`: the gate between two runs, a metric over runs, and the green
runs that `compare last-green` takes as its baseline."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from engine.cli.options import JsonListOpt, JsonOpt, StoreOpt, open_log


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
    max_p95_ttft_increase: Annotated[
        float | None, typer.Option(help="Relative p95 time-to-first-token increase allowed (streamed runs).")
    ] = None,
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
    latency_across_machines: Annotated[
        bool,
        typer.Option(
            "--latency-across-machines", help="Compare p95 latency of runs from different machines too."
        ),
    ] = False,
) -> None:
    """Compare two runs metric by metric; with --gate, exit 1 on a regression, 2 when they share no case.

    `engine compare RUN RUN --base-variant A --variant B` compares two experiments of one run."""

    from engine.cli.compare.gate import (
        NOT_GREEN_NOTE,
        gate_with,
        last_green,
        own_verdict_not_green,
        print_comparison,
        variant_pair,
    )
    from engine.runtime.run_status import run_state
    from engine.views.compare.comparison import compare_runs
    from engine.views.queries import resolve_run

    overrides = {
        "max_pass_rate_drop": max_pass_rate_drop,
        "max_mean_score_drop": max_mean_score_drop,
        "max_error_rate_increase": max_error_rate_increase,
        "max_p95_latency_increase": max_p95_latency_increase,
        "max_cost_increase": max_cost_increase,
        "max_p95_ttft_increase": max_p95_ttft_increase,
    }
    pair = variant_pair(base_variant, variant)  # a mistake on the command line before the store
    skipped: list[str] = []  # damaged bundles of --from, said with the comparison
    with open_log(store) as log:
        cand_id = resolve_run(log, candidate)
        spec = run_state(log, cand_id).spec
        assert spec is not None
        if base == "last-green":
            found = last_green(log, spec.name, cand_id, from_dir, not no_baseline_ok, skipped)
            if found is None:
                typer.echo(f"no green run of {spec.name!r} yet: nothing to gate {cand_id} against")
                if own_verdict_not_green(log, cand_id):
                    typer.echo(NOT_GREEN_NOTE)
                    from engine.cli.hints import hint

                    typer.echo(hint("mark", cand_id, "green", store=store))
                return
            source, base_id = found
        else:
            source, base_id = log, resolve_run(log, base)
        gate_spec = gate_with(spec.gate, overrides)
        result = compare_runs(
            source, base_id, cand_id, gate_spec, require_same_cases=same_cases, variants=pair,
            latency_across_machines=latency_across_machines,
        )
        result.warnings[:0] = skipped
    print_comparison(result, as_json)
    if gate and result.nothing_to_compare:  # not a pass: a gate that compared nothing must not go green
        raise typer.Exit(2)
    if gate and result.regressed:
        raise typer.Exit(1)


def history(
    experiment: Annotated[str, typer.Argument(help="Experiment name (its `name` field).")],
    metric: Annotated[
        str, typer.Option(help="pass_rate | mean_score | cost_usd | p95_latency_ms.")
    ] = "pass_rate",
    variant: Annotated[str | None, typer.Option(help="Whose figures (default: each run's baseline).")] = None,
    store: StoreOpt = None,
    as_json: JsonListOpt = False,
    every: Annotated[
        bool, typer.Option("--all", help="Also the partial reruns (engine run --case/--variant).")
    ] = False,
) -> None:
    """A metric over every run of one experiment, oldest first, with a sparkline and the green runs."""
    from engine.cli.compare.history import print_history

    with open_log(store) as log:
        print_history(log, experiment, metric, variant, as_json, every)


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
