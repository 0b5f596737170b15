"""The report as one self-contained HTML file (`engine report --html FILE`): inline CSS and SVG, no JS."""

from __future__ import annotations

from html import escape
from typing import Any

from engine.cli import labels_view
from engine.cli import report_view as view
from engine.cli.report_view import interval

CSS = """
body{font:14px/1.45 system-ui,"Segoe UI",Roboto,sans-serif;margin:0;color:#1f2328;background:#fff}
main{max-width:1100px;margin:0 auto;padding:24px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
.meta{color:#57606a;margin:0 0 12px}code{background:#f3f4f6;padding:1px 4px;border-radius:4px}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;background:#ddf4e4;color:#116329}
.badge.partial,.badge.bad{background:#fff1d6;color:#7d4e00}
.warn{background:#fff8e6;border-left:4px solid #d4a72c;padding:8px 12px}
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}
th,td{border-bottom:1px solid #d8dee4;padding:5px 8px;text-align:right;white-space:nowrap}
th:first-child,td:first-child{text-align:left;white-space:normal}th{background:#f6f8fa}
tr.baseline td:first-child{font-style:italic}tr.winner td{background:#eefbf1}
.tag{font-size:11px;color:#57606a;margin-left:6px}.legend span{margin-right:14px}
.sw{display:inline-block;width:11px;height:11px;border-radius:2px;margin-right:4px;vertical-align:-1px}
.winner-line{font-size:15px}.note{color:#57606a;font-size:12px}
svg text{font:12px system-ui,sans-serif;fill:#1f2328}
"""
COLORS = {"baseline": "#8c959f", "winner": "#2da44e", "other": "#4c78a8"}
ROW_H, LABEL_W, VALUE_W, PLOT_W, TOP, AXIS_H = 30, 190, 170, 460, 8, 28


def e(text: object) -> str:
    return escape(str(text), quote=True)


def _role(r: dict[str, Any], name: str) -> str:
    return "winner" if name == r["winner"] else "baseline" if name == r["baseline"] else "other"


def _domain(r: dict[str, Any]) -> tuple[float, float]:
    """[0, 1] for the usual scores; wider only when a score itself is outside (whiskers are clipped)."""
    scores = [v["strategy_score"] for v in r["variants"] if v["strategy_score"] is not None]
    return min([0.0, *scores]), max([1.0, *scores])


def score_chart(r: dict[str, Any]) -> str:
    """Horizontal bars of the strategy score with 95% CI whiskers; baseline line, winner highlighted."""
    variants = r["variants"]
    if not variants:
        return '<p class="note">No variants.</p>'
    lo, hi = _domain(r)
    whiskers = r.get("strategy", "mean") != "pass_at_k"

    def x(value: float) -> float:
        return round(LABEL_W + (min(max(value, lo), hi) - lo) / (hi - lo) * PLOT_W, 2)

    height = TOP + ROW_H * len(variants) + AXIS_H
    width = LABEL_W + PLOT_W + VALUE_W
    parts = [
        f'<svg viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'aria-label="strategy score by variant">',
        "<title>strategy score by variant, with 95% confidence intervals</title>",
    ]
    bottom = TOP + ROW_H * len(variants)
    for i in range(5):
        tick = lo + (hi - lo) * i / 4
        parts.append(
            f'<line x1="{x(tick)}" y1="{TOP}" x2="{x(tick)}" y2="{bottom}" stroke="#d8dee4"/>'
            f'<text x="{x(tick)}" y="{bottom + 16}" text-anchor="middle">{tick:.2f}</text>'
        )
    for i, v in enumerate(variants):
        parts.append(_bar(r, v, TOP + i * ROW_H, x, whiskers))
    base = next((v for v in variants if v["name"] == r["baseline"]), None)
    if base is not None and base["strategy_score"] is not None:
        bx = x(base["strategy_score"])
        parts.append(
            f'<line x1="{bx}" y1="{TOP - 4}" x2="{bx}" y2="{bottom}" stroke="#57606a" '
            f'stroke-dasharray="4 3"><title>baseline score</title></line>'
        )
    parts.append(f'<line x1="{x(lo)}" y1="{bottom}" x2="{x(hi)}" y2="{bottom}" stroke="#57606a"/>')
    return "".join(parts) + "</svg>"


def _bar(r: dict[str, Any], v: dict[str, Any], y: float, x: Any, whiskers: bool) -> str:
    role, name, score = _role(r, v["name"]), v["name"], v["strategy_score"]
    mid = y + ROW_H / 2
    label = name if len(name) <= 26 else name[:25] + "\u2026"
    star = "\u2605 " if role == "winner" else ""
    weight = ' font-weight="bold"' if role != "other" else ""
    out = [
        f'<text x="{LABEL_W - 8}" y="{mid + 4}" text-anchor="end"{weight}>{e(star + label)}'
        f"<title>{e(name)} ({role})</title></text>"
    ]
    if score is None:
        out.append(f'<text x="{x(0.0) + 4}" y="{mid + 4}" fill="#57606a">no score</text>')
        return "".join(out)
    left, right = sorted((x(0.0), x(score)))
    out.append(
        f'<rect x="{left}" y="{y + 6}" width="{round(right - left, 2)}" height="{ROW_H - 12}" '
        f'fill="{COLORS[role]}" rx="2"><title>{e(name)}: {score:.3f}</title></rect>'
    )
    ci = v["ci95"] if whiskers else None
    if ci:
        a, b = x(ci[0]), x(ci[1])
        out.append(
            f'<g stroke="#1f2328" stroke-width="1.5"><line x1="{a}" y1="{mid}" x2="{b}" y2="{mid}"/>'
            f'<line x1="{a}" y1="{mid - 6}" x2="{a}" y2="{mid + 6}"/>'
            f'<line x1="{b}" y1="{mid - 6}" x2="{b}" y2="{mid + 6}"/></g>'
        )
    text = f"{score:.3f}" + (f" {interval(ci, 2)}" if ci else "")
    out.append(f'<text x="{LABEL_W + PLOT_W + 8}" y="{mid + 4}">{e(text)}</text>')
    return "".join(out)


def _table(header: list[str], rows: list[list[str]], classes: list[str] | None = None) -> str:
    """Every cell escaped here; each row has exactly one cell per header (tests check the structure)."""
    head = "".join(f"<th>{e(h)}</th>" for h in header)
    marks = classes or [""] * len(rows)
    body = "".join(
        f'<tr class="{cls}">' + "".join(f"<td>{e(cell)}</td>" for cell in cells) + "</tr>"
        for cls, cells in zip(marks, rows, strict=True)
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _roles(r: dict[str, Any]) -> list[str]:
    return [_role(r, v["name"]) for v in r["variants"]]


def _sections(r: dict[str, Any]) -> list[str]:
    legend = "".join(
        f'<span><i class="sw" style="background:{COLORS[k]}"></i>{label}</span>'
        for k, label in (("baseline", "baseline"), ("winner", "winner"), ("other", "other variants"))
    )
    note = "whiskers: 95% CI of the mean score; dashed line: baseline score"
    if r.get("strategy", "mean") == "pass_at_k":
        note = "pass@k has no CI in the report, so no whiskers; dashed line: baseline score"
    out = [
        f"<h2>Score by variant ({e(r.get('strategy', 'mean'))})</h2>",
        score_chart(r),
        f'<p class="legend note">{legend} {e(note)}</p>',
        "<h2>Variants</h2>",
        _table(view.RESULT_HEADER, view.result_rows(r), _roles(r)),
        *([f'<p class="note">{e(view.score_basis_note(r))}</p>'] if view.score_basis_note(r) else []),
        "<h2>Latency and spend</h2>",
        _table(view.SPEND_HEADER, view.spend_rows(r), _roles(r)),
    ]
    if r["comparisons"]:
        marks = ["winner" if c["candidate"] == r["winner"] else "" for c in r["comparisons"]]
        out += [f"<h2>{e(view.comparison_title(r))}</h2>"]
        out.append(_table(view.COMPARISON_HEADER, view.comparison_rows(r), marks))
    if r.get("pairwise"):
        out += ["<h2>Pairwise judge (side by side against the baseline)</h2>"]
        out.append(_table(view.PAIRWISE_HEADER, view.pairwise_rows(r), [""] * len(r["pairwise"])))
    if labels_view.has_labels(r):
        out.append(f"<h2>{e(labels_view.TITLE)}</h2>")
        out.append(_table(labels_view.LABELS_HEADER, labels_view.label_rows(r)))
        items = "".join(f"<li>{e(line)}</li>" for line in labels_view.label_lines(r))
        out.append(f'<ul class="labels">{items}</ul>')
    out.append(f'<p class="winner-line">{e(view.winner_line(r))}</p>')
    errors = view.error_lines(r)
    if errors:
        items = "".join(f"<li>{e(line)}</li>" for line in errors)
        out += ['<h2>Errors by class</h2>', f'<ul class="errors">{items}</ul>']
    flaky = r["flaky_cases"]
    if flaky:
        out.append(f"<h2>Flaky cases ({len(flaky)})</h2>")
        out.append(_table(["variant", "case", "passed"], view.flaky_rows(r)))
        if len(flaky) > view.MAX_FLAKY_ROWS:
            out.append(f'<p class="note">...and {len(flaky) - view.MAX_FLAKY_ROWS} more.</p>')
    for title, found in view.line_sections(r):
        items = "".join(f"<li>{e(line)}</li>" for line in found)
        out += [f"<h2>{e(title)}</h2>", f"<ul>{items}</ul>"]
    variations = view.variation_rows(r)
    if variations:
        marks = ["winner" if v["accepted"] else "" for v in r["variations"]]
        out += ["<h2>Tuning</h2>", _table(view.VARIATION_HEADER, variations, marks)]
    return out


def report_html(report: dict[str, Any]) -> str:
    r = report
    status = f'<span class="badge{"" if r["status"] == "completed" else " bad"}">{e(r["status"])}</span>'
    partial = ' <span class="badge partial">partial</span>' if r["is_partial"] else ""
    head = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{e(r['experiment'])}: run {e(r['run_id'])}</title>",
        f"<style>{CSS}</style></head><body><main>",
        f"<h1>{e(r['experiment'])}</h1>",
        f'<p class="meta">run <code>{e(r["run_id"])}</code> {status}{partial} '
        f"trials {r.get('trials_done', 0)}/{r.get('trials_total', 0)}</p>",
    ]
    head += [f'<p class="warn">{e(line)}</p>' for line in view.status_lines(r)]
    return "\n".join(head + _sections(r) + ["</main></body></html>"]) + "\n"
