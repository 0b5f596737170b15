"""The lines a sequential run or a race ends its report with: why it stopped, what it saved, and
each variant a race dropped with the evidence. Plain text; each surface escapes it.
"""

from __future__ import annotations

from engine.events.report import RunReport, StoppingReport

WHY_STOPPED = {
    "efficacy": "the answer was clear",
    "futility": "no candidate was doing better",
    "max": "all looks taken",
    "": "still running",
}


def stopping_lines(r: RunReport) -> list[str]:
    s = r.stopping
    if s is None:
        return []
    return race_lines(s) if s.rule == "race" else [sequential_line(s)]


def sequential_line(s: StoppingReport) -> str:
    saved = s.trials_saved / s.fixed_design_trials if s.fixed_design_trials else 0.0
    why = WHY_STOPPED.get(s.stopped, s.stopped)
    return (
        f"Sequential: look {s.looks_done} of {s.max_looks} ({why}); "
        f"{s.trials_saved} of {s.fixed_design_trials} trials saved ({saved:.0%}); "
        f"significant means p < {s.level:.3g} at this look."
    )


RACE_STOPPED = {
    "one_left": "one variant left",
    "equivalent": "the rest within min_improvement of the leader",
    "max": "the cases ran out",
    "": "still racing",
}


def _deficit(delta: float) -> str:
    # a variant with no pass has an infinite cost per pass, logged as the largest float
    return "everything (it passed nothing)" if abs(delta) > 1e300 else f"{delta:.3g}"


def race_lines(s: StoppingReport) -> list[str]:
    """The race's end, and each variant it dropped with the evidence."""
    saved = s.trials_saved / s.fixed_design_trials if s.fixed_design_trials else 0.0
    lines = [
        f"Race on {s.objective}: round {s.looks_done} of {s.max_looks} "
        f"({RACE_STOPPED.get(s.stopped, s.stopped)}); still in: {', '.join(s.survivors)}; "
        f"{s.trials_saved} of {s.fixed_design_trials} trials saved ({saved:.0%})."
    ]
    if s.eliminations:
        lines.append("Dropped variants ran fewer cases, so their intervals are wider:")
    for d in s.eliminations:
        lines.append(
            f"  {d.variant} after round {d.round}: behind {d.lost_to} by {_deficit(d.delta)} "
            f"over {d.cases} cases (p (raw) {d.p_value:.3g} < {d.threshold:.3g})"
        )
    return lines
