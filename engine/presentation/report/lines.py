"""The lines of text of a report's sections on every surface: errors by class, failing scenarios with
their rerun command, agents' tools, what the plan can decide, repeats that gave one output, and the
note on what a score is. Plain text; each surface escapes it.
"""

from __future__ import annotations

import msgspec

from engine.events.report import RunReport
from engine.presentation.report.numbers import fmt


def error_lines(r: RunReport, stage: str = "trial") -> list[str]:
    """'connect (40 trials; a 40): connect: connection refused to 127.0.0.1:9', one line per class of
    the stage: "trial" (no output) or "grading" (an output no grader could score)."""
    lines = []
    for err in r.errors:
        if err.stage != stage:
            continue
        unit = "trials" if err.stage == "trial" else "grades"
        where = ", ".join(f"{name} {n}" for name, n in err.variants.items())
        lines.append(f"{err.error_class} ({err.count} {unit}; {where}): {err.sample}")
    return lines


MAX_SCENARIO_LINES = 20


def scenario_lines(r: RunReport) -> list[str]:
    """Scenarios (variant x case) that did not pass, with the command that reruns their first
    failing trial; the JSON report has every scenario and every reproducer."""
    rerun: dict[tuple[str, str], str] = {}
    for found in r.reproducers:
        rerun.setdefault((found.variant, found.case), found.command)
    out = []
    for s in r.scenarios:
        if s.verdict == "pass":
            continue
        line = f"{s.variant} / {s.case}: {s.verdict} ({s.passes}/{s.runs} passed)"
        command = rerun.get((s.variant, s.case))
        out.append(line + (f"  rerun: {command}" if command else ""))
    if len(out) > MAX_SCENARIO_LINES:
        out = out[:MAX_SCENARIO_LINES] + [f"... {len(out) - MAX_SCENARIO_LINES} more in the JSON report"]
    return out


def sandbox_lines(r: RunReport) -> list[str]:
    """Where each sandboxed variant's agent ran: its sandbox, network, limits and services."""
    found = []
    for v in r.variants:
        box = v.sandbox
        if isinstance(box, msgspec.UnsetType):
            continue
        parts = [box.kind, f"network {box.network}" + "".join(f" +{p}" for p in box.host_ports)]
        parts += [f"{name} {value}" for name, value in box.limits.items()]
        parts += [f"services {', '.join(box.services)}"] if box.services else []
        found.append(f"{v.name}: {', '.join(parts)}")
    return found


def tool_lines(r: RunReport) -> list[str]:
    """Agents' own tool figures, for the variants whose agents report them."""
    return [
        f"{v.name}: {fmt(v.mean_tool_calls, 2)} tool calls per trial, {fmt(v.tool_success_rate)} succeeded"
        for v in r.variants
        if v.mean_tool_calls is not None or v.tool_success_rate is not None
    ] + [
        f"{v.name} calls by tool: " + ", ".join(f"{tool} {n}" for tool, n in v.tool_calls_by_tool.items())
        for v in r.variants
        if v.tool_calls_by_tool  # UNSET (no transcripts) is false too
    ]


def score_basis_note(r: RunReport) -> str | None:
    """Under pass_at_k with early exit, what a case's score is (see `mean_score_basis`)."""
    if r.mean_score_basis != "first_attempt":
        return None
    return (
        "score and its CI: each case's first attempt (pass_at_k stops at a case's first pass, so the "
        "attempts after a miss would overstate it); pass rate counts every attempt that ran"
    )


def decidability_lines(r: RunReport) -> list[str]:
    """The smallest p the planned cases and repeats allow, for acceptance and for the per-case gate,
    and a warning for each decision they can never reach (reports before the field: nothing)."""
    d = r.decidability
    if d is None:
        return []
    accept = f"acceptance: smallest p {d.min_p_accept:.3g} over {d.cases} cases"
    if d.accept_level is not None:
        accept += f", needs < {d.accept_level:.3g}"
    gate = (
        f"per-case gate (compare --gate): smallest p {d.min_p_case_gate:.3g} at {d.repeats} repeats, "
        f"needs < {d.case_gate_level:.3g} (Holm over {d.case_gate_tests} cases x variants)"
    )
    return [accept, gate] + [f"warning: {line}" for line in d.warnings]


MAX_NAMED_CASES = 5


def identical_lines(r: RunReport) -> list[str]:
    """Per variant, the cases whose repeats all gave one output: repeats that measured nothing."""
    by_variant: dict[str, list[str]] = {}
    for found in r.identical_repeats:
        by_variant.setdefault(found.variant, []).append(found.case)
    lines = []
    for variant, cases in by_variant.items():
        named = ", ".join(cases[:MAX_NAMED_CASES]) + (", ..." if len(cases) > MAX_NAMED_CASES else "")
        lines.append(f"{variant}: {len(cases)} case(s) ({named})")
    return lines


def params_lines(r: RunReport) -> list[str]:
    """Per variant, the parameters its target received (the experiment's with the variant's own over
    them), not only its overrides; nothing when no variant sets any."""
    unset = msgspec.UnsetType
    sent = {v.name: v.params if isinstance(v.sent_params, unset) else v.sent_params for v in r.variants}
    if not any(sent.values()):
        return []
    return [f"{name}: " + (", ".join(f"{k}={v}" for k, v in p.items()) or "the target's defaults")
            for name, p in sent.items()]  # fmt: skip
