"""The report as GitHub-flavoured Markdown (`engine report --markdown`), e.g. for CI step summaries."""

from __future__ import annotations

from typing import Any

MAX_FLAKY_ROWS = 50
_MD_SPECIAL = "\\`*_[]|~"


def md_escape(text: object) -> str:
    """Safe inside a table cell or a line: no HTML, no emphasis, no cell breaks, one line."""
    out = str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    for char in _MD_SPECIAL:
        out = out.replace(char, "\\" + char)
    return " ".join(out.splitlines())


def fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def interval(pair: list[float] | None, digits: int = 3) -> str:
    return "-" if not pair else f"[{pair[0]:.{digits}f}, {pair[1]:.{digits}f}]"


def p_value(value: float | None) -> str:
    if value is None:
        return "-"
    return "<0.0001" if value < 0.0001 else f"{value:.4f}"


def signed(value: float | None) -> str:
    return "-" if value is None else f"{value:+.3f}"


def variant_label(r: dict[str, Any], name: str) -> str:
    marks = [m for m, on in (("baseline", name == r["baseline"]), ("winner", name == r["winner"])) if on]
    return name + (f" ({', '.join(marks)})" if marks else "")


def _table(header: list[str], align: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def variant_rows(r: dict[str, Any]) -> list[list[str]]:
    rows = []
    for v in r["variants"]:
        lat = v.get("latency_ms") or {}
        rows.append(
            [
                md_escape(variant_label(r, v["name"])), str(v["trials"]), str(v["errors"]),
                fmt(v["strategy_score"]), interval(v["ci95"]), fmt(v["pass_rate"]),
                interval(v["pass_rate_ci95"]), case_verdicts(v),
                fmt(lat.get("p50"), 1), fmt(lat.get("p95"), 1),
                str(v["tokens"]["in"]), str(v["tokens"]["out"]), f"{v['cost_usd']:.4f}",
            ]
        )  # fmt: skip
    return rows


def case_verdicts(variant: dict[str, Any]) -> str:
    cases = variant.get("cases") or {}  # absent from reports written before verdicts existed
    return "/".join(str(cases.get(key, 0)) for key in ("passed", "failed", "flaky", "errors"))


VARIANT_HEADER = [
    "variant", "trials", "errors", "score", "score 95% CI", "pass rate", "pass 95% CI",
    "cases pass/fail/flaky/err", "p50 ms", "p95 ms", "tokens in", "tokens out", "cost $",
]  # fmt: skip
COMPARISON_HEADER = ["candidate", "delta", "95% CI", "p", "p (Holm)", "test", "significant"]


def comparison_rows(r: dict[str, Any]) -> list[list[str]]:
    return [
        [
            md_escape(c["candidate"]), signed(c["delta"]), interval(c["ci95"]), p_value(c["p_value"]),
            p_value(c["p_value_adjusted"]), md_escape(c["test"]), "**yes**" if c["significant"] else "no",
        ]
        for c in r["comparisons"]
    ]  # fmt: skip


def winner_line(r: dict[str, Any]) -> str:
    if not r["winner"]:
        return "**Winner:** none"
    significance = "significant" if r["winner_significant"] else "not significant"
    return f"**Winner:** {md_escape(r['winner'])} ({significance})"


def report_markdown(report: dict[str, Any]) -> str:
    r = report
    partial = " (partial)" if r["is_partial"] else ""
    lines = [
        f"## {md_escape(r['experiment'])}: run {md_escape(r['run_id'])}, {md_escape(r['status'])}{partial}",
        "",
    ]
    if r["is_partial"]:
        done, total = r.get("trials_done", 0), r.get("trials_total", 0)
        lines += [f"> **Warning:** partial run: {done} of {total} trials done.", ""]
    strategy = md_escape(r.get("strategy", "mean"))
    lines.append(f"Score strategy: {strategy}; intervals are 95% CIs (score CI: of the mean score).")
    lines.append("")
    align = [":---"] + ["---:"] * (len(VARIANT_HEADER) - 1)
    lines += _table(VARIANT_HEADER, align, variant_rows(r)) + [""]
    if r["comparisons"]:
        lines += [f"### vs baseline {md_escape(r['baseline'])} (paired by case, Holm-adjusted)", ""]
        align = [":---"] + ["---:"] * 4 + [":---", ":---:"]
        lines += _table(COMPARISON_HEADER, align, comparison_rows(r)) + [""]
    lines += [winner_line(r), ""]
    if r["budget_exhausted"]:
        lines += ["**Budget exhausted:** " + ", ".join(md_escape(b) for b in r["budget_exhausted"]), ""]
    lines += tags_section(r)
    lines += flaky_section(r)
    lines += variations_section(r)
    return "\n".join(lines).rstrip("\n") + "\n"


def tags_section(r: dict[str, Any]) -> list[str]:
    """Score and pass rate per case tag and variant (absent from reports written before tags)."""
    tags = sorted({tag for v in r["variants"] for tag in v.get("by_tag") or {}})
    if not tags:
        return []
    names = [v["name"] for v in r["variants"]]
    rows = []
    for tag in tags:
        row = [md_escape(tag)]
        for v in r["variants"]:
            found = (v.get("by_tag") or {}).get(tag)
            row.append("-" if found is None else f"{fmt(found['mean_score'])} / {fmt(found['pass_rate'])}")
        rows.append(row)
    lines = ["### By tag (score / pass rate)", ""]
    return lines + _table(["tag", *map(md_escape, names)], [":---"] + ["---:"] * len(names), rows) + [""]


def flaky_section(r: dict[str, Any]) -> list[str]:
    flaky = r["flaky_cases"]
    if not flaky:
        return []
    rows = [
        [md_escape(f["variant"]), md_escape(f["case"]), f"{f['passes']}/{f['runs']}"]
        for f in flaky[:MAX_FLAKY_ROWS]
    ]
    lines = [f"### Flaky cases ({len(flaky)})", ""]
    lines += _table(["variant", "case", "passed"], [":---", ":---", "---:"], rows)
    if len(flaky) > MAX_FLAKY_ROWS:
        lines.append(f"\n...and {len(flaky) - MAX_FLAKY_ROWS} more.")
    return lines + [""]


def variations_section(r: dict[str, Any]) -> list[str]:
    variations = r.get("variations") or []
    if not variations:
        return []
    rows = [
        [
            md_escape(v["variant"]), md_escape(v["parameter"]), md_escape(v["value"]),
            fmt(v["baseline_score"]), fmt(v["candidate_score"]), signed(v["delta"]),
            "**accepted**" if v["accepted"] else "rejected", md_escape(v.get("reason", "")),
        ]
        for v in variations
    ]  # fmt: skip
    header = ["variant", "parameter", "value", "baseline", "candidate", "delta", "decision", "reason"]
    return ["### Tuning", ""] + _table(header, [":---"] * 3 + ["---:"] * 3 + [":---"] * 2, rows) + [""]
