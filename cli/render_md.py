"""The report as GitHub-flavoured Markdown (`engine report --markdown`), e.g. for CI step summaries."""

from __future__ import annotations

from typing import Any

from engine.cli import labels_view
from engine.cli import report_view as view

_MD_SPECIAL = "\\`*_[]|~"


def md_escape(text: object) -> str:
    """Safe inside a table cell or a line: no HTML, no emphasis, no cell breaks, one line."""
    out = str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    for char in _MD_SPECIAL:
        out = out.replace(char, "\\" + char)
    return " ".join(out.splitlines())


def _table(header: list[str], rows: list[list[str]], left: int = 1) -> list[str]:
    """A table whose first `left` columns are text (left-aligned); the rest are figures."""
    align = [":---"] * left + ["---:"] * (len(header) - left)
    lines = ["| " + " | ".join(map(md_escape, header)) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(map(md_escape, row)) + " |" for row in rows]
    return lines + [""]


WARNING = "Warning: "  # how report_view.status_lines marks a warning


def _status_line(line: str) -> str:
    """A quoted line; only the report's warnings are marked as such (a race's rounds are not)."""
    text = line.removeprefix(WARNING)
    return f"> **Warning:** {md_escape(text)}" if text != line else f"> {md_escape(line)}"


def report_markdown(report: dict[str, Any]) -> str:
    r = report
    partial = " (partial)" if r["is_partial"] else ""
    lines = [
        f"## {md_escape(r['experiment'])}: run {md_escape(r['run_id'])}, {md_escape(r['status'])}{partial}",
        "",
    ]
    lines += [_status_line(line) for line in view.status_lines(r)]
    lines += [""] if view.status_lines(r) else []
    strategy = md_escape(r.get("strategy", "mean"))
    lines += [f"Score strategy: {strategy}; intervals are 95% CIs (score CI: of the mean score).", ""]
    basis = view.score_basis_note(r)
    lines += [md_escape(basis[0].upper() + basis[1:]), ""] if basis else []
    lines += _table(view.RESULT_HEADER, view.result_rows(r))
    lines += ["### Latency and spend", ""] + _table(view.SPEND_HEADER, view.spend_rows(r))
    if r["comparisons"]:
        lines += [f"### {md_escape(view.comparison_title(r))}", ""]
        lines += _table(view.COMPARISON_HEADER, view.comparison_rows(r))
    if r.get("pairwise"):
        lines += ["### Pairwise judge (side by side against the baseline)", ""]
        lines += _table(view.PAIRWISE_HEADER, view.pairwise_rows(r), left=2)
    if labels_view.has_labels(r):
        lines += [f"### {labels_view.TITLE}", ""]
        lines += _table(labels_view.LABELS_HEADER, labels_view.label_rows(r))
        lines += [f"- {md_escape(line)}" for line in labels_view.label_lines(r)] + [""]
    label, _, rest = view.winner_line(r).partition(": ")
    lines += [f"**{label}:** {md_escape(rest)}", ""]
    lines += errors_section(r)
    lines += tags_section(r)
    lines += flaky_section(r)
    for title, found in view.line_sections(r):
        lines += [f"### {title}", ""] + [f"- {md_escape(line)}" for line in found] + [""]
    if r.get("variations"):
        lines += ["### Tuning", ""] + _table(view.VARIATION_HEADER, view.variation_rows(r), left=3)
    return "\n".join(lines).rstrip("\n") + "\n"


def errors_section(r: dict[str, Any]) -> list[str]:
    found = view.error_lines(r)
    if not found:
        return []
    return ["### Errors by class", ""] + [f"- {md_escape(line)}" for line in found] + [""]


def tags_section(r: dict[str, Any]) -> list[str]:
    """Score and pass rate per case tag and variant (absent from reports written before tags)."""
    tags = sorted({tag for v in r["variants"] for tag in v.get("by_tag") or {}})
    if not tags:
        return []
    names = [v["name"] for v in r["variants"]]
    rows = []
    for tag in tags:
        row = [tag]
        for v in r["variants"]:
            found = (v.get("by_tag") or {}).get(tag)
            pair = None if found is None else (view.fmt(found["mean_score"]), view.fmt(found["pass_rate"]))
            row.append("-" if pair is None else f"{pair[0]} / {pair[1]}")
        rows.append(row)
    return ["### By tag (score / pass rate)", ""] + _table(["tag", *names], rows)


def flaky_section(r: dict[str, Any]) -> list[str]:
    flaky = r["flaky_cases"]
    if not flaky:
        return []
    lines = [f"### Flaky cases ({len(flaky)})", ""]
    lines += _table(["variant", "case", "passed"], view.flaky_rows(r), left=2)
    if len(flaky) > view.MAX_FLAKY_ROWS:
        lines += [f"...and {len(flaky) - view.MAX_FLAKY_ROWS} more.", ""]
    return lines
