"""`engine plan FILE [--reuse[=RUN]]`: how many trials a run would reuse and send, and what the sent
ones would cost by the earlier runs' figures; nothing is called and nothing is written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from engine.cli.options import JsonListOpt, StoreOpt, open_log, store_path


def plan(
    file: Annotated[Path, typer.Argument(help="Experiment file.")],
    store: StoreOpt = None,
    reuse: Annotated[
        str | None,
        typer.Option("--reuse", metavar="[=RUN]", help="Plan with reuse on (as `engine run --reuse`)."),
    ] = None,
    no_reuse: Annotated[bool, typer.Option("--no-reuse", help="Plan as if every trial were sent.")] = False,
    as_json: JsonListOpt = False,
) -> None:
    """Show what `engine run FILE` would send and reuse, without calling any model."""
    from engine.input.loader import load_plan
    from engine.input.narrow import Narrowing, narrow
    from engine.runtime.reuse_plan import plan_reuse

    loaded = load_plan(file)
    if reuse is not None or no_reuse:
        loaded = narrow(loaded, Narrowing(reuse="off" if no_reuse else reuse))
    if store_path(store).exists():
        with open_log(store) as log:
            planned = plan_reuse(log, loaded)
    else:  # no store yet: nothing to reuse
        from engine.store.memory import MemoryStore

        planned = plan_reuse(MemoryStore(), loaded)
    estimate = planned.estimate()
    if as_json:
        print(json.dumps({
            "trials": planned.reused + planned.sent, "reused": planned.reused, "sent": planned.sent,
            "reuse": planned.reuse_on, "sources": dict(planned.sources),
            "estimated_tokens": estimate[0] if estimate else None,
            "estimated_cost_usd": round(estimate[1], 6) if estimate else None,
            "variants": [{"name": v.name, "reused": v.reused.trials, "sent": v.sent}
                         for v in planned.variants],
        }, indent=2))  # fmt: skip
        return
    for line in plan_lines(planned, estimate):
        print(line)


def plan_lines(planned: object, estimate: tuple[int, float] | None) -> list[str]:
    from engine.runtime.reuse_plan import ReusePlan

    assert isinstance(planned, ReusePlan)
    total = planned.reused + planned.sent
    lines = [f"{total} trials: {planned.reused} reused, {planned.sent} to send"]
    if not planned.reuse_on:
        lines[0] += " (reuse is off: `--reuse` or a [reuse] table turns it on)"
    if planned.sources:
        lines.append("reused from: " + ", ".join(f"{run} ({n})" for run, n in planned.sources.most_common()))
        saved = [v.reused for v in planned.variants]
        tokens, cost = sum(f.tokens for f in saved), sum(f.cost_usd for f in saved)
        lines.append(f"reusing saves what they cost then: {tokens:,} tokens, ${cost:.4f}")
    if estimate is not None:
        lines.append(f"to send, by the earlier runs' figures: ~{estimate[0]:,} tokens, ~${estimate[1]:.4f}")
    elif planned.sent:
        lines.append("to send: no earlier figures to estimate their tokens and cost from")
    width = max(len(v.name) for v in planned.variants) if planned.variants else 0
    for v in planned.variants:
        lines.append(f"  {v.name:<{width}}  {v.reused.trials} reused, {v.sent} to send")
    return lines
