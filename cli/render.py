"""Terminal rendering of reports, run lists and status (rich tables)."""

from __future__ import annotations

import datetime
import json
import sys
import time
from typing import Any

import msgspec

from cli.render_md import case_verdicts
from events import kinds as k


def print_report(data: bytes, as_json: bool) -> None:
    if as_json:
        sys.stdout.buffer.write(data + b"\n")
        sys.stdout.flush()
        return
    console = make_console()
    for renderable in report_renderables(json.loads(data)):
        console.print(renderable)


def make_console() -> Any:
    """A terminal gets its own width; a pipe or file gets wide tables instead of 80 wrapped columns."""
    from rich.console import Console

    return Console(width=None if sys.stdout.isatty() else 160)


def _fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _interval(pair: list[float] | None) -> str:
    return "" if not pair else f"[{pair[0]:.3f}, {pair[1]:.3f}]"


def report_renderables(r: dict[str, Any]) -> list[Any]:
    from rich.table import Table

    title = f"{r['experiment']}  run {r['run_id']}  {r['status']}{'  (partial)' if r['is_partial'] else ''}"
    table = Table(title=title)
    columns = ("variant", "trials", "errors", "score", "95% CI", "pass rate [95% CI]",
               "cases pass/fail/flaky/err", "p50/p95 ms", "tokens in/out", "cost $")  # fmt: skip
    for name in columns:
        table.add_column(name, justify="left" if name == "variant" else "right")
    for v in r["variants"]:
        mark = " (baseline)" if v["name"] == r["baseline"] else ""
        mark += " *winner*" if v["name"] == r["winner"] else ""
        table.add_row(
            v["name"] + mark, str(v["trials"]), str(v["errors"]), _fmt(v["strategy_score"]),
            _interval(v["ci95"]), f"{_fmt(v['pass_rate'])} {_interval(v['pass_rate_ci95'])}",
            case_verdicts(v),
            f'{_fmt(v["latency_ms"].get("p50"), 1)}/{_fmt(v["latency_ms"].get("p95"), 1)}',
            f"{v['tokens']['in']}/{v['tokens']['out']}", f"{v['cost_usd']:.4f}",
        )  # fmt: skip
    out: list[Any] = [table]
    if r["comparisons"]:
        comp = Table(title=f"vs baseline {r['baseline']} (paired by case, Holm-adjusted)")
        for name in ("candidate", "delta", "95% CI", "p", "p adj", "test", "significant"):
            comp.add_column(name)
        for c in r["comparisons"]:
            comp.add_row(
                c["candidate"], _fmt(c["delta"]), _interval(c["ci95"]), _fmt(c["p_value"], 4),
                _fmt(c["p_value_adjusted"], 4), c["test"], "yes" if c["significant"] else "no",
            )  # fmt: skip
        out.append(comp)
    if r.get("variations"):
        tuned = Table(title="tuning: variations tried, in order")
        for name in ("variant", "parameter", "value", "baseline", "candidate", "delta", "p", "decision"):
            tuned.add_column(name)
        for v in r["variations"]:
            tuned.add_row(
                v["variant"], v["parameter"], str(v["value"]), _fmt(v["baseline_score"]),
                _fmt(v["candidate_score"]), f"{v['delta']:+.3f}", _fmt(v.get("p_value"), 4),
                "accepted" if v["accepted"] else "rejected",
            )  # fmt: skip
        out.append(tuned)
    winner = r["winner"] or "none"
    out.append(f"winner: {winner} ({'significant' if r['winner_significant'] else 'not significant'})")
    if r["budget_exhausted"]:
        out.append(f"budget exhausted: {', '.join(r['budget_exhausted'])}")
    if r["flaky_cases"]:
        out.append(f"flaky cases: {len(r['flaky_cases'])}")
    return out


def _when(ts: float) -> str:
    return datetime.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M:%S") if ts else "-"


def print_runs(runs: list[Any], as_json: bool) -> None:
    if as_json:
        sys.stdout.buffer.write(msgspec.json.encode(runs) + b"\n")
        return
    from rich.table import Table

    table = Table()
    for name in ("run id", "experiment", "status", "trials", "started", "origin"):
        table.add_column(name)
    for s in runs:
        # a tuning session does not know its trial count up front
        total = str(s.trials_total) if s.trials_total else "-"
        table.add_row(s.run_id, s.experiment, s.status, total, _when(s.started_ts), s.origin)
    make_console().print(table)


def print_status(summary: Any, state: Any, as_json: bool) -> None:
    done = state.trials_done()
    info = {
        "run_id": summary.run_id,
        "experiment": summary.experiment,
        "status": summary.status,
        "trials_total": state.trials_total,
        "trials_done": done,
        "in_flight": len(state.in_flight),
        "errors": sum(c.failed.bit_count() for c in state.cells.values()),
        "passed": sum(c.passed.bit_count() for c in state.cells.values()),
        "tokens": state.tokens_used,
        "pid": summary.pid,
        "elapsed_s": round((summary.finished_ts or time.time()) - summary.started_ts, 1)
        if summary.started_ts
        else 0.0,
    }
    tune = state.spec.tune if state.spec is not None and state.spec.kind == "tune" else None
    if tune is not None:  # seed 000's status: experiments run, accepted, elapsed
        info["variations"] = len(state.variations)
        info["accepted"] = sum(1 for v in state.variations if isinstance(v, k.VariationAccepted))
        info["max_experiments"] = tune.max_experiments
    if as_json:
        sys.stdout.buffer.write(msgspec.json.encode(info) + b"\n")
        return
    print(f"{summary.run_id}  {summary.experiment}  {summary.status}  elapsed {info['elapsed_s']:.0f} s")
    if tune is None:
        pct = 100.0 * done / state.trials_total if state.trials_total else 0.0
        print(f"trials {done}/{state.trials_total} ({pct:.0f}%), in flight {info['in_flight']}", end="")
    else:
        print(f"variations {info['variations']}/{tune.max_experiments}, accepted {info['accepted']}", end="")
        print(f", trials {done}, in flight {info['in_flight']}", end="")
    print(f", errors {info['errors']}, passed {info['passed']}")


def print_best(best: list[Any], as_json: bool) -> None:
    if as_json:
        sys.stdout.buffer.write(msgspec.json.encode(best) + b"\n")
        return
    if not best:
        print("no accepted variations yet")
        return
    from rich.table import Table

    table = Table(title="best accepted variation per parameter")
    for name in ("parameter", "value", "score", "delta", "run id", "origin", "when"):
        table.add_column(name)
    for b in best:
        table.add_row(
            b.parameter,
            str(b.value),
            f"{b.candidate_score:.4f}",
            f"{b.delta:+.4f}",
            b.run_id,
            b.origin,
            _when(b.ts),
        )
    make_console().print(table)
