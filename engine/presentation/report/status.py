"""What every surface says before and after a report's tables: what a reader must know before
trusting them (a partial run, errors, budgets, the grading round, warnings) and the winner line.
Plain text; each surface escapes it.
"""

from __future__ import annotations

from engine.events.report import ReuseReport, RunReport
from engine.presentation.report.numbers import P_HOLM, P_RAW, p_value, signed


def winner_line(r: RunReport) -> str:
    if len(r.variants) == 1:  # nothing to beat: a lone variant wins nothing
        return f"Winner: none (one variant, {r.variants[0].name}: nothing to compare)"
    if not r.winner:
        return "Winner: none"
    significance = "significant" if r.winner_significant else "not significant"
    if r.tied_best:
        p = r.runner_up_p_value
        separation = "not separated" if p is None else f"not separated: {P_RAW} {p_value(p)}"
        tied = ", ".join(r.tied_best)
        return f"Tied best: {tied} ({r.winner} leads, {separation}; vs baseline {significance})"
    return f"Winner: {r.winner} ({significance})"


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
    lines += reuse_lines(r)
    lines += [f"Warning: {warning}" for warning in r.warnings]
    return lines


def reuse_lines(r: RunReport) -> list[str]:
    """[reuse]: how many trials were taken from earlier runs rather than sent, and what that saved."""
    parts = [v.reuse for v in r.variants if isinstance(v.reuse, ReuseReport)]
    if not parts:
        return []
    runs = sorted({run for part in parts for run in part.sources})
    tokens, cost = sum(p.tokens_saved for p in parts), sum(p.cost_saved_usd for p in parts)
    sent = sum(v.reuse.sent if isinstance(v.reuse, ReuseReport) else v.trials for v in r.variants)
    return [
        f"Reused: {sum(p.trials for p in parts)} trials from {', '.join(runs)} (not sent; {tokens:,} tokens, "
        f"${cost:.4f} not spent again); {sent} sent."
    ]


def unscored_case_lines(r: RunReport) -> list[str]:
    """Cases errors left without any score are out of the pass rate and score: say how many."""
    hit = ", ".join(f"{v.name} {v.unscored_cases}" for v in r.variants if v.unscored_cases)
    return [f"Cases errors left unscored (not in pass rate or score): {hit}."] if hit else []


def more_error_lines(r: RunReport) -> list[str]:
    """Candidates that error significantly more than the baseline: their score counts only the cases
    they finished, so a win would mean nothing."""
    return [
        f"More errors than {c.baseline}: {c.candidate} errors per trial "
        f"{signed(c.error_rate_delta)} ({P_HOLM} {p_value(c.error_rate_p_value)}); "
        "its score counts only the cases it finished."
        for c in r.comparisons
        if c.more_errors
    ]


def no_comparison_note(r: RunReport) -> str:
    """Why a report has no delta to draw: one variant, or no candidate with a score to compare."""
    if len(r.variants) < 2:
        return "No comparisons (one variant)."
    return f"No comparisons: no candidate has a score to compare with {r.baseline} (every trial errored?)."
