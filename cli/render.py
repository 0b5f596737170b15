"""Terminal rendering of reports, run lists and status (rich tables)."""

from __future__ import annotations

import datetime
import json
import sys
from typing import Any

import msgspec


def print_report(data: bytes, as_json: bool) -> None:
    if as_json:
        sys.stdout.buffer.write(data + b"\n")
        sys.stdout.flush()
        return
    from rich.console import Console

    Console().print(*report_renderables(json.loads(data)))


def _fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _interval(pair: list[float] | None) -> str:
    return "" if not pair else f"[{pair[0]:.3f}, {pair[1]:.3f}]"


def report_renderables(r: dict[str, Any]) -> list[Any]:
    from rich.table import Table

    title = f"{r['experiment']}  run {r['run_id']}  {r['status']}{'  (partial)' if r['is_partial'] else ''}"
    table = Table(title=title)
    for name in (
        "variant",
        "trials",
        "errors",
        "score",
        "95% CI",
        "pass rate",
        "p50 ms",
        "p95 ms",
        "tokens",
        "cost $",
    ):
        table.add_column(name, justify="left" if name == "variant" else "right")
    for v in r["variants"]:
        mark = " (baseline)" if v["name"] == r["baseline"] else ""
        mark += " *winner*" if v["name"] == r["winner"] else ""
        table.add_row(
            v["name"] + mark, str(v["trials"]), str(v["errors"]), _fmt(v["strategy_score"]),
            _interval(v["ci95"]), f"{_fmt(v['pass_rate'])} {_interval(v['pass_rate_ci95'])}",
            _fmt(v["latency_ms"].get("p50"), 1), _fmt(v["latency_ms"].get("p95"), 1),
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
    from rich.console import Console
    from rich.table import Table

    table = Table()
    for name in ("run id", "experiment", "status", "trials", "started", "origin"):
        table.add_column(name)
    for s in runs:
        table.add_row(s.run_id, s.experiment, s.status, str(s.trials_total), _when(s.started_ts), s.origin)
    Console().print(table)


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
    }
    if as_json:
        sys.stdout.buffer.write(msgspec.json.encode(info) + b"\n")
        return
    pct = 100.0 * done / state.trials_total if state.trials_total else 0.0
    print(f"{summary.run_id}  {summary.experiment}  {summary.status}")
    print(f"trials {done}/{state.trials_total} ({pct:.0f}%), in flight {info['in_flight']}", end="")
    print(f", errors {info['errors']}, passed {info['passed']}")


def print_best(best: list[Any], as_json: bool) -> None:
    if as_json:
        sys.stdout.buffer.write(msgspec.json.encode(best) + b"\n")
        return
    if not best:
        print("no accepted variations yet")
        return
    from rich.console import Console
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
    Console().print(table)
