"""The report's reuse figures: per variant, what was taken from earlier runs, and a warning when the
outputs a comparison rests on were made on different days (the model behind an endpoint may have
changed in between; [reuse] max_age bounds it). Ages are measured from the run's start, so a replay
says the same."""

from __future__ import annotations

import time

import msgspec

from engine.events.report import ReuseReport
from engine.stats.comparisons import DIGITS
from engine.store.projections.run_state import SCALE, ReuseTally, RunState


def reuse_report(state: RunState, name: str) -> ReuseReport | msgspec.UnsetType:
    tally = state.reuse.get(name) or ReuseTally()
    totals = state.totals.get(name)
    judged = totals.judge_tokens_reused if totals is not None else 0
    judged += sum(t.reused_tokens for (_, variant), t in state.pairwise.items() if variant == name)
    if not tally.trials and not judged:
        return msgspec.UNSET
    made = sum(c.completed.bit_count() for (v, _), c in state.cells.items() if v == name)
    start = state.started_ts
    return ReuseReport(
        trials=tally.trials,
        sent=made - tally.trials,
        sources=dict(sorted(tally.sources.items())),
        oldest_age_s=round(start - tally.oldest_ts, 3) if tally.oldest_ts and start else None,
        newest_age_s=round(start - tally.newest_ts, 3) if tally.newest_ts and start else None,
        tokens_saved=tally.tokens,
        cost_saved_usd=round(tally.cost / SCALE, DIGITS),
        judge_tokens_saved=judged,
    )


def made_days(state: RunState, name: str) -> set[str]:
    """The UTC days the variant's outputs were made on: its reused ones', and the run's for those it sent."""
    tally = state.reuse.get(name)
    days: set[str] = set()
    if tally is not None and tally.trials:
        days |= {_day(tally.oldest_ts), _day(tally.newest_ts)}
        made = sum(c.completed.bit_count() for (v, _), c in state.cells.items() if v == name)
        if made > tally.trials and state.started_ts:
            days.add(_day(state.started_ts))
    elif state.started_ts:
        days.add(_day(state.started_ts))
    return days


def reuse_warnings(state: RunState, baseline: str | None, variants: list[str]) -> list[str]:
    """One warning per candidate whose outputs were made on other days than the baseline's."""
    if not state.reuse or baseline is None:
        return []
    base = made_days(state, baseline)
    found = []
    for name in variants:
        days = made_days(state, name)
        if name != baseline and days and base and days != base:
            found.append(
                f"{name}'s outputs were made on {_span(days)}, the baseline {baseline}'s on {_span(base)} "
                f"(reused from earlier runs): the model behind an endpoint may have changed in between; "
                f"[reuse] max_age bounds how old a reused output may be"
            )
    return found


def _day(ts: float) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(ts))


def _span(days: set[str]) -> str:
    ordered = sorted(days)
    return ordered[0] if len(ordered) == 1 else f"{ordered[0]}..{ordered[-1]}"


def compared_days_warnings(base: RunState, cand: RunState) -> list[str]:
    """`engine compare`: when either run reused outputs and the two runs' outputs were made on
    different days (runs that reused nothing are compared as they always were)."""
    if not base.reuse and not cand.reuse:
        return []
    base_days = set().union(*(made_days(base, v) for v in base.variants))
    cand_days = set().union(*(made_days(cand, v) for v in cand.variants))
    if not base_days or not cand_days or base_days == cand_days:
        return []
    return [
        f"the baseline run's outputs were made on {_span(base_days)}, the candidate run's on "
        f"{_span(cand_days)} (some reused from earlier runs): the model behind an endpoint may have "
        f"changed in between; [reuse] max_age bounds how old a reused output may be"
    ]
