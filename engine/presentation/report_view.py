"""One view of a report for every surface: the terminal, Markdown, the HTML file and the web pages
render the same sections, tables and lines from here, so they cannot disagree on what a column holds
or which sections exist.

"cases p/f/fl/e" counts each variant's cases by verdict: passed, failed, flaky, errored.

Values are plain text; each surface escapes them for its own format.
"""

from __future__ import annotations

from engine.events.report import RunReport, StoppingReport, VariantReport, VariationRecord

RESULT_HEADER = [
    "variant", "trials", "errors", "score", "score 95% CI", "pass rate", "pass 95% CI",
    "cases p/f/fl/e",
]  # fmt: skip
SPEND_HEADER = ["variant", "p50 ms", "p95 ms", "p99 ms", "tokens in", "tokens out", "judge tokens", "cost $"]
COMPARISON_HEADER = ["candidate", "delta", "95% CI", "p", "p (Holm)", "test", "significant"]
VARIATION_HEADER = ["variant", "parameter", "value", "baseline", "candidate", "delta", "p", "decision"]
PAIRWISE_HEADER = [
    "candidate", "judge", "W", "T", "L", "undecided", "win rate", "cases +/-/=", "p (cases)", "A picked",
    "lean p",
]  # fmt: skip
JUDGE_HEADER = ["judge", "judged", "unparseable", "unparseable rate", "mean spread", "max spread"]
FLAKY_HEADER = ["variant", "case", "passed"]
MAX_FLAKY_ROWS = 50


def fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def interval(pair: list[float] | None, digits: int = 2) -> str:
    return "-" if not pair else f"[{pair[0]:.{digits}f}, {pair[1]:.{digits}f}]"


def p_value(value: float | None) -> str:
    """Three significant digits, for people: 0.266, 0.0107, 1.00; below 0.001 only that."""
    if value is None:
        return "-"
    return "<0.001" if value < 0.001 else f"{value:#.3g}"


def money(value: float | None) -> str:
    """Fixed decimals, never an exponent: 0.000037 (a cent is small beside a trial's cost), 3.72."""
    if value is None:
        return "-"
    return f"{value:,.2f}" if abs(value) >= 1 else f"{value:.6f}"


def signed(value: float | None) -> str:
    return "-" if value is None else f"{value:+.3f}"


def role(r: RunReport, name: str) -> str:
    """winner | baseline | other: how the charts and tables mark a variant."""
    return "winner" if name == r.winner else "baseline" if name == r.baseline else "other"


def variant_label(r: RunReport, name: str) -> str:
    """The name, marked as baseline (unless it says so itself) and as winner, as the winner line
    says it: "tied best" when the best are not separated, nothing when there was nothing to beat."""
    tied = r.tied_best
    best = "tied best" if name in tied else "winner" if name == r.winner and not tied else ""
    marks = [m for m, on in (("baseline", name == r.baseline and name != "baseline"),
                             (best, bool(best) and len(r.variants) > 1)) if on]  # fmt: skip
    return name + (f" ({', '.join(marks)})" if marks else "")


def case_verdicts(variant: VariantReport) -> str:
    c = variant.cases
    text = "/".join(str(n) for n in (c.passed, c.failed, c.flaky, c.errors))
    return text + (f" +{c.ungraded} ungraded" if c.ungraded else "")


def result_rows(r: RunReport) -> list[list[str]]:
    return [
        [
            variant_label(r, v.name), str(v.trials), str(v.errors), fmt(v.strategy_score),
            interval(v.ci95), fmt(v.pass_rate), interval(v.pass_rate_ci95), case_verdicts(v),
        ]
        for v in r.variants
    ]  # fmt: skip


def spend_rows(r: RunReport) -> list[list[str]]:
    rows = []
    for v in r.variants:
        lat = v.latency_ms
        latencies = [fmt(p, 1) for p in (lat.p50, lat.p95, lat.p99)]
        tokens = [str(v.tokens.in_), str(v.tokens.out), str(v.judge_tokens)]
        rows.append([variant_label(r, v.name), *latencies, *tokens, money(v.cost_usd)])
    return rows


def comparison_title(r: RunReport) -> str:
    base = r.baseline
    who = "the baseline" if base == "baseline" else f"{base} (the baseline)"
    return f"Candidates vs {who}: paired by case, Holm-adjusted"


def comparison_rows(r: RunReport) -> list[list[str]]:
    return [
        [
            c.candidate, signed(c.delta), interval(c.ci95), p_value(c.p_value),
            p_value(c.p_value_adjusted), c.test, "yes" if c.significant else "no",
        ]
        for c in r.comparisons
    ]  # fmt: skip


def pairwise_rows(r: RunReport) -> list[list[str]]:
    """Side-by-side verdicts against the baseline: wins, ties, losses; "A picked" is how often the
    judge chose the response shown first, "lean p" the test of "it does not lean to A or B"."""
    return [
        [
            p.variant, p.grader, str(p.wins), str(p.ties), str(p.losses), str(p.undecided),
            fmt(p.win_rate), f"{p.cases_preferring}/{p.cases_against}/{p.cases_even}",
            p_value(p.p_value), fmt(p.position_a_rate), p_value(p.position_p_value),
        ]
        for p in r.pairwise
    ]  # fmt: skip


def variation_rows(r: RunReport) -> list[list[str]]:
    return [
        [
            v.variant, v.parameter, str(v.value), fmt(v.baseline_score), fmt(v.candidate_score),
            signed(v.delta), p_value(v.p_value), "accepted" if v.accepted else _rejected(v),
        ]
        for v in r.variations
    ]  # fmt: skip


def _rejected(v: VariationRecord) -> str:
    # a candidate a tuning race dropped ran only the rounds it was in: its scores are less certain
    return f"dropped in round {v.dropped_round}" if v.dropped_round else "rejected"


def judge_rows(r: RunReport) -> list[list[str]]:
    """Each judge's unreadable answers and, with repeated judging, how far its scores of one output spread."""
    return [
        [name, str(j.judged), str(j.unparseable), fmt(j.unparseable_rate), fmt(j.mean_spread),
         fmt(j.max_spread)]
        for name, j in r.judge_agreement.items()
    ]  # fmt: skip


def winner_line(r: RunReport) -> str:
    if len(r.variants) == 1:  # nothing to beat: a lone variant wins nothing
        return f"Winner: none (one variant, {r.variants[0].name}: nothing to compare)"
    if not r.winner:
        return "Winner: none"
    significance = "significant" if r.winner_significant else "not significant"
    if r.tied_best:
        p = r.runner_up_p_value
        separation = "not separated" if p is None else f"not separated: p {p_value(p)}"
        tied = ", ".join(r.tied_best)
        return f"Tied best: {tied} ({r.winner} leads, {separation}; vs baseline {significance})"
    return f"Winner: {r.winner} ({significance})"


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


def status_lines(r: RunReport) -> list[str]:
    """What a reader must know before trusting the tables: why the run stopped, errors, budgets, grading."""
    lines = []
    if r.is_partial:
        lines.append(f"Partial run: {r.trials_done} of {r.trials_total} trials done.")
    if r.stop_reason:
        lines.append(f"Stopped: {r.stop_reason}")
    rate = r.error_rate
    if rate:
        verdict = " - above" if r.error_rate_exceeded else ", within"
        lines.append(
            f"Error rate: {rate:.1%} of finished trials had no usable result{verdict} the limit "
            f"of {r.max_error_rate:.0%} (execution.max_error_rate)."
        )
    lines += unscored_case_lines(r)
    lines += more_error_lines(r)
    if r.budget_exhausted:
        notes = [stop.note for stop in r.budget_stops if stop.note]
        lines.append("Budget exhausted: " + ("; ".join(notes) if notes else ", ".join(r.budget_exhausted)))
    if r.grading:
        lines.append(
            f"Grading round {r.grading} ({r.grading_name}); earlier rounds: engine report RUN --grading N."
        )
    lines += [f"Warning: {warning}" for warning in r.warnings]
    return lines


def unscored_case_lines(r: RunReport) -> list[str]:
    """Cases errors left without any score are out of the pass rate and score: say how many."""
    hit = ", ".join(f"{v.name} {v.unscored_cases}" for v in r.variants if v.unscored_cases)
    return [f"Cases errors left unscored (not in pass rate or score): {hit}."] if hit else []


def more_error_lines(r: RunReport) -> list[str]:
    """Candidates that error significantly more than the baseline: their score counts only the cases
    they finished, so a win would mean nothing."""
    return [
        f"More errors than {c.baseline}: {c.candidate} errors per trial "
        f"{signed(c.error_rate_delta)} (p {p_value(c.error_rate_p_value)}, Holm); "
        "its score counts only the cases it finished."
        for c in r.comparisons
        if c.more_errors
    ]


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
            f"over {d.cases} cases (p {d.p_value:.3g} < {d.threshold:.3g})"
        )
    return lines


def flaky_rows(r: RunReport) -> list[list[str]]:
    return [[f.variant, f.case, f"{f.passes}/{f.runs}"] for f in r.flaky_cases[:MAX_FLAKY_ROWS]]


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


def tag_rows(r: RunReport) -> tuple[list[str], list[list[str]]]:
    """(header, rows): score / pass rate per case tag and variant."""
    tags = sorted({tag for v in r.variants for tag in v.by_tag})
    rows = []
    for tag in tags:
        row = [tag]
        for v in r.variants:
            found = v.by_tag.get(tag)
            row.append("-" if found is None else f"{fmt(found.mean_score)} / {fmt(found.pass_rate)}")
        rows.append(row)
    return ["tag", *(v.name for v in r.variants)], rows
