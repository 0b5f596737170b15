"""One view of a report for every surface: the terminal, Markdown, the HTML file and the web pages
render the same tables from here (headers and rows), so they cannot disagree on what a column holds.
The lines of text around them are in report_lines.py and report_stopping.py, the numbers' writing
in report_numbers.py.

"p/f/fl/e" counts each variant's cases by verdict: passed, failed, flaky, errored.

Values are plain text; each surface escapes them for its own format.
"""

from __future__ import annotations

from engine.events.report import Pace, RunReport, VariantReport, VariationRecord
from engine.presentation.report.numbers import P_HOLM, P_RAW, fmt, interval, money, p_value, signed

RESULT_HEADER = [
    "variant", "trials", "errors", "score", "score 95% CI", "pass", "pass 95% CI", "p/f/fl/e",
]  # fmt: skip
SPEND_HEADER = ["variant", "p50 ms", "p95 ms", "p99 ms", "tokens in", "tokens out", "judge tokens", "cost $"]
STREAM_HEADER = ["variant", "streamed", "TTFT ms", "TTFT 95% CI", "TTFT p95", "tokens/s", "tokens/s 95% CI"]
COMPARISON_HEADER = ["candidate", "delta", "95% CI", P_RAW, P_HOLM, "test", "significant"]
VARIATION_HEADER = ["variant", "parameter", "value", "baseline", "candidate", "delta", P_RAW, "decision"]
# both p-values raw: each candidate's own test by case, and the test of the judge's lean to A or B
PAIRWISE_HEADER = [
    "candidate", "judge", "W", "T", "L", "undecided", "win rate", "cases +/-/=", P_RAW, "A picked",
    "lean p (raw)",
]  # fmt: skip
JUDGE_HEADER = ["judge", "judged", "unparseable", "unparseable rate", "mean spread", "max spread"]
FLAKY_HEADER = ["variant", "case", "passed"]
MAX_FLAKY_ROWS = 50


def role(r: RunReport, name: str) -> str:
    """winner | tied | baseline | other: how the charts and tables mark a variant; the best that are
    not separated are "tied" (the winner among them too), as the winner line says."""
    if name in r.tied_best and len(r.variants) > 1:
        return "tied"
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
        # the name alone: the results table above marks the baseline and the best (a wide table keeps
        # a long name and its marks on one line at 100 columns)
        rows.append([v.name, *latencies, *tokens, money(v.cost_usd)])
    return rows


def streamed(r: RunReport) -> list[VariantReport]:
    """The variants whose target streamed (stream = true): they have a time to first token."""
    return [v for v in r.variants if isinstance(v.ttft_ms, Pace)]


def stream_rows(r: RunReport) -> list[list[str]]:
    """Streamed answers' pace: mean time to first token (its interval over trials, and p95), and the
    mean tokens per second after it."""
    rows = []
    for v in streamed(r):
        ttft, rate = v.ttft_ms, v.tokens_per_s
        assert isinstance(ttft, Pace)
        pace = [fmt(rate.mean, 1), interval(rate.ci95, 1)] if isinstance(rate, Pace) else ["-", "-"]
        rows.append([variant_label(r, v.name), str(ttft.n), fmt(ttft.mean, 1), interval(ttft.ci95, 1),
                     fmt(ttft.p95, 1), *pace])  # fmt: skip
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


def flaky_rows(r: RunReport) -> list[list[str]]:
    return [[f.variant, f.case, f"{f.passes}/{f.runs}"] for f in r.flaky_cases[:MAX_FLAKY_ROWS]]


WIDE_TAGS = 5  # up to this many variants, a column each; more: a row per tag and variant


def tag_rows(r: RunReport) -> tuple[list[str], list[list[str]]]:
    """(header, rows): score / pass rate per case tag and variant; with many variants a row per tag
    and variant, so the table keeps its label columns at 100 columns."""
    tags = sorted({tag for v in r.variants for tag in v.by_tag})
    if len(r.variants) > WIDE_TAGS:
        return ["tag", "variant", "score / pass"], [
            [tag, v.name, f"{fmt(v.by_tag[tag].mean_score)} / {fmt(v.by_tag[tag].pass_rate)}"]
            for tag in tags for v in r.variants if tag in v.by_tag
        ]  # fmt: skip
    rows = []
    for tag in tags:
        row = [tag]
        for v in r.variants:
            found = v.by_tag.get(tag)
            row.append("-" if found is None else f"{fmt(found.mean_score)} / {fmt(found.pass_rate)}")
        rows.append(row)
    return ["tag", *(v.name for v in r.variants)], rows
