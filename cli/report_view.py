"""One view of a report for every format: the terminal, Markdown and HTML render the same tables and
lines from here, so they cannot disagree on what a column holds.

"cases p/f/fl/e" counts each variant's cases by verdict: passed, failed, flaky, errored.

Values are plain text; each renderer escapes them for its own format.
"""

from __future__ import annotations

from typing import Any

Report = dict[str, Any]

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


def variant_label(r: Report, name: str) -> str:
    """The name, marked as baseline (unless it says so itself) and as winner, as the winner line
    says it: "tied best" when the best are not separated, nothing when there was nothing to beat."""
    tied = r.get("tied_best") or []
    best = "tied best" if name in tied else "winner" if name == r["winner"] and not tied else ""
    marks = [m for m, on in (("baseline", name == r["baseline"] and name != "baseline"),
                             (best, bool(best) and len(r["variants"]) > 1)) if on]  # fmt: skip
    return name + (f" ({', '.join(marks)})" if marks else "")


def case_verdicts(variant: dict[str, Any]) -> str:
    cases = variant.get("cases") or {}  # absent from reports written before verdicts existed
    text = "/".join(str(cases.get(key, 0)) for key in ("passed", "failed", "flaky", "errors"))
    ungraded = cases.get("ungraded", 0)
    return text + (f" +{ungraded} ungraded" if ungraded else "")


def result_rows(r: Report) -> list[list[str]]:
    return [
        [
            variant_label(r, v["name"]), str(v["trials"]), str(v["errors"]), fmt(v["strategy_score"]),
            interval(v["ci95"]), fmt(v["pass_rate"]), interval(v["pass_rate_ci95"]), case_verdicts(v),
        ]
        for v in r["variants"]
    ]  # fmt: skip


def spend_rows(r: Report) -> list[list[str]]:
    rows = []
    for v in r["variants"]:
        lat = v.get("latency_ms") or {}
        latencies = [fmt(lat.get(p), 1) for p in ("p50", "p95", "p99")]
        tokens = [str(v["tokens"]["in"]), str(v["tokens"]["out"]), str(v.get("judge_tokens", 0))]
        rows.append([variant_label(r, v["name"]), *latencies, *tokens, money(v["cost_usd"])])
    return rows


def comparison_title(r: Report) -> str:
    base = r["baseline"]
    who = "the baseline" if base == "baseline" else f"{base} (the baseline)"
    return f"candidates vs {who}: paired by case, Holm-adjusted"


def comparison_rows(r: Report) -> list[list[str]]:
    return [
        [
            c["candidate"], signed(c["delta"]), interval(c["ci95"]), p_value(c["p_value"]),
            p_value(c["p_value_adjusted"]), c["test"], "yes" if c["significant"] else "no",
        ]
        for c in r["comparisons"]
    ]  # fmt: skip


def pairwise_rows(r: Report) -> list[list[str]]:
    """Side-by-side verdicts against the baseline: wins, ties, losses; "A picked" is how often the
    judge chose the response shown first, "lean p" the test of "it does not lean to A or B"."""
    return [
        [
            p["variant"], p["grader"], str(p["wins"]), str(p["ties"]),
            str(p["losses"]), str(p["undecided"]), fmt(p["win_rate"]), _case_split(p),
            p_value(p["p_value"]), fmt(p["position_a_rate"]), p_value(p["position_p_value"]),
        ]
        for p in r.get("pairwise") or []
    ]  # fmt: skip


def _case_split(p: Report) -> str:
    """Cases preferring the candidate / the baseline / neither (a report without them: "-")."""
    if "cases_preferring" not in p:
        return "-"
    return f"{p['cases_preferring']}/{p['cases_against']}/{p['cases_even']}"


def variation_rows(r: Report) -> list[list[str]]:
    return [
        [
            v["variant"], v["parameter"], str(v["value"]), fmt(v["baseline_score"]),
            fmt(v["candidate_score"]), signed(v["delta"]), p_value(v.get("p_value")),
            "accepted" if v["accepted"] else _rejected(v),
        ]
        for v in r.get("variations") or []
    ]  # fmt: skip


def _rejected(v: Report) -> str:
    # a candidate a tuning race dropped ran only the rounds it was in: its scores are less certain
    return f"dropped in round {v['dropped_round']}" if v.get("dropped_round") else "rejected"


def winner_line(r: Report) -> str:
    if len(r["variants"]) == 1:  # nothing to beat: a lone variant wins nothing
        return f"Winner: none (one variant, {r['variants'][0]['name']}: nothing to compare)"
    if not r["winner"]:
        return "Winner: none"
    significance = "significant" if r["winner_significant"] else "not significant"
    tied = r.get("tied_best") or []
    if tied:
        p = r.get("runner_up_p_value")
        separation = "not separated" if p is None else f"not separated: p {p_value(p)}"
        return f"Tied best: {', '.join(tied)} ({r['winner']} leads, {separation}; vs baseline {significance})"
    return f"Winner: {r['winner']} ({significance})"


def error_lines(r: Report) -> list[str]:
    """'connect (40 trials): connect: connection refused to 127.0.0.1:9', one line per class."""
    lines = []
    for err in r.get("errors") or []:
        unit = "trials" if err["stage"] == "trial" else "grades"
        where = ", ".join(f"{name} {n}" for name, n in err.get("variants", {}).items())
        lines.append(f"{err['class']} ({err['count']} {unit}; {where}): {err['sample']}")
    return lines


def status_lines(r: Report) -> list[str]:
    """What a reader must know before trusting the tables: why the run stopped, errors, budgets, grading."""
    lines = []
    if r["is_partial"]:
        lines.append(f"Partial run: {r.get('trials_done', 0)} of {r.get('trials_total', 0)} trials done.")
    if r.get("stop_reason"):
        lines.append(f"Stopped: {r['stop_reason']}")
    if r.get("stopping"):
        lines += (
            race_lines(r["stopping"]) if r["stopping"]["rule"] == "race" else [sequential_line(r["stopping"])]
        )
    rate = r.get("error_rate")
    if rate:
        verdict = " - above" if r.get("error_rate_exceeded") else ", within"
        lines.append(
            f"Error rate: {rate:.1%} of finished trials had no usable result{verdict} the limit "
            f"of {r.get('max_error_rate', 0.1):.0%} (execution.max_error_rate)."
        )
    lines += unscored_case_lines(r)
    lines += more_error_lines(r)
    if r["budget_exhausted"]:
        notes = [stop["note"] for stop in r.get("budget_stops") or [] if stop.get("note")]
        lines.append("Budget exhausted: " + ("; ".join(notes) if notes else ", ".join(r["budget_exhausted"])))
    if r.get("grading"):
        name = r.get("grading_name", "")
        lines.append(f"Grading round {r['grading']} ({name}); earlier rounds: engine report RUN --grading N.")
    lines += [f"Warning: {warning}" for warning in r.get("warnings") or []]
    return lines


def unscored_case_lines(r: Report) -> list[str]:
    """Cases errors left without any score are out of the pass rate and score: say how many."""
    counts = [(v["name"], v.get("unscored_cases", 0)) for v in r["variants"]]
    hit = ", ".join(f"{name} {n}" for name, n in counts if n)
    if not hit:
        return []
    return [f"Cases errors left unscored (not in pass rate or score): {hit}."]


def more_error_lines(r: Report) -> list[str]:
    """Candidates that error significantly more than the baseline: their score counts only the cases
    they finished, so a win would mean nothing."""
    return [
        f"More errors than {c['baseline']}: {c['candidate']} errors per trial "
        f"{signed(c['error_rate_delta'])} (p {p_value(c.get('error_rate_p_value'))}, Holm); "
        "its score counts only the cases it finished."
        for c in r.get("comparisons") or []
        if c.get("more_errors")
    ]


WHY_STOPPED = {
    "efficacy": "the answer was clear",
    "futility": "no candidate was doing better",
    "max": "all looks taken",
    "": "still running",
}


def sequential_line(s: Report) -> str:
    saved = s["trials_saved"] / s["fixed_design_trials"] if s["fixed_design_trials"] else 0.0
    why = WHY_STOPPED.get(s["stopped"], s["stopped"])
    return (
        f"Sequential: look {s['looks_done']} of {s['max_looks']} ({why}); "
        f"{s['trials_saved']} of {s['fixed_design_trials']} trials saved ({saved:.0%}); "
        f"significant means p < {s['level']:.3g} at this look."
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


def race_lines(s: Report) -> list[str]:
    """The race's end, and each variant it dropped with the evidence."""
    saved = s["trials_saved"] / s["fixed_design_trials"] if s["fixed_design_trials"] else 0.0
    lines = [
        f"Race on {s['objective']}: round {s['looks_done']} of {s['max_looks']} "
        f"({RACE_STOPPED.get(s['stopped'], s['stopped'])}); still in: {', '.join(s['survivors'])}; "
        f"{s['trials_saved']} of {s['fixed_design_trials']} trials saved ({saved:.0%})."
    ]
    if s.get("eliminations"):
        lines.append("Dropped variants ran fewer cases, so their intervals are wider:")
    for d in s.get("eliminations") or []:
        lines.append(
            f"  {d['variant']} after round {d['round']}: behind {d['lost_to']} by {_deficit(d['delta'])} "
            f"over {d['cases']} cases (p {d['p_value']:.3g} < {d['threshold']:.3g})"
        )
    return lines


def flaky_rows(r: Report) -> list[list[str]]:
    flaky = r["flaky_cases"][:MAX_FLAKY_ROWS]
    return [[f["variant"], f["case"], f"{f['passes']}/{f['runs']}"] for f in flaky]


MAX_SCENARIO_LINES = 20


def scenario_lines(r: Report) -> list[str]:
    """Scenarios (variant x case) that did not pass, with the command that reruns their first
    failing trial; the JSON report has every scenario and every reproducer."""
    rerun: dict[tuple[str, str], str] = {}
    for found in r.get("reproducers") or []:
        rerun.setdefault((found["variant"], found["case"]), found["command"])
    out = []
    for s in r.get("scenarios") or []:
        if s["verdict"] == "pass":
            continue
        line = f"{s['variant']} / {s['case']}: {s['verdict']} ({s['passes']}/{s['runs']} passed)"
        command = rerun.get((s["variant"], s["case"]))
        out.append(line + (f"  rerun: {command}" if command else ""))
    if len(out) > MAX_SCENARIO_LINES:
        out = out[:MAX_SCENARIO_LINES] + [f"... {len(out) - MAX_SCENARIO_LINES} more in the JSON report"]
    return out


def tool_lines(r: Report) -> list[str]:
    """Agents' own tool figures, for the variants whose agents report them."""
    return [
        f"{v['name']}: {fmt(v.get('mean_tool_calls'), 2)} tool calls per trial, "
        f"{fmt(v.get('tool_success_rate'))} succeeded"
        for v in r["variants"]
        if v.get("mean_tool_calls") is not None or v.get("tool_success_rate") is not None
    ]


def score_basis_note(r: Report) -> str | None:
    """Under pass_at_k with early exit, what a case's score is (see `mean_score_basis`)."""
    if r.get("mean_score_basis") != "first_attempt":
        return None
    return (
        "score and its CI: each case's first attempt (pass_at_k stops at a case's first pass, so the "
        "attempts after a miss would overstate it); pass rate counts every attempt that ran"
    )


def decidability_lines(r: Report) -> list[str]:
    """The smallest p the planned cases and repeats allow, for acceptance and for the per-case gate,
    and a warning for each decision they can never reach (reports before the field: nothing)."""
    d = r.get("decidability")
    if not d:
        return []
    accept = f"acceptance: smallest p {d['min_p_accept']:.3g} over {d['cases']} cases"
    if d["accept_level"] is not None:
        accept += f", needs < {d['accept_level']:.3g}"
    gate = (
        f"per-case gate (compare --gate): smallest p {d['min_p_case_gate']:.3g} at {d['repeats']} repeats, "
        f"needs < {d['case_gate_level']:.3g} (Holm over {d['case_gate_tests']} cases x variants)"
    )
    return [accept, gate] + [f"warning: {line}" for line in d.get("warnings") or []]


MAX_NAMED_CASES = 5


def identical_lines(r: Report) -> list[str]:
    """Per variant, the cases whose repeats all gave one output: repeats that measured nothing."""
    by_variant: dict[str, list[str]] = {}
    for found in r.get("identical_repeats") or []:
        by_variant.setdefault(found["variant"], []).append(found["case"])
    lines = []
    for variant, cases in by_variant.items():
        named = ", ".join(cases[:MAX_NAMED_CASES]) + (", ..." if len(cases) > MAX_NAMED_CASES else "")
        lines.append(f"{variant}: {len(cases)} case(s) ({named})")
    return lines


IDENTICAL_TITLE = "Identical outputs across repeats (caching or temperature 0?)"


def line_sections(r: Report) -> list[tuple[str, list[str]]]:
    """(title, lines) of the report's list sections that have something to say."""
    found = [("Agents' tools", tool_lines(r)), ("Scenarios not passing", scenario_lines(r)),
             (IDENTICAL_TITLE, identical_lines(r))]  # fmt: skip
    found.append(("What this plan can decide", decidability_lines(r)))
    return [(title, lines) for title, lines in found if lines]
