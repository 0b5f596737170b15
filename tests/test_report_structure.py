"""Every surface shows every section of the report: the terminal, Markdown, the HTML file, the web
run page and the JSON report, all rendered from one typed report with every section filled in.

Each section is found by its title and by a value only that section holds (a grading error's class,
a pairwise grader's name, a rerun command...), so a surface that drops a section, or shows its title
over nothing, fails here.
"""

from __future__ import annotations

import html
import json

import msgspec
import pytest
from rich.console import Console

from engine.events.report import RunReport
from engine.presentation.html_file import report_html
from engine.presentation.markdown import report_markdown
from engine.presentation.sections import SECTION_KEYS, sections
from engine.presentation.terminal import report_renderables
from engine.web.run_page import run_html

# section key: (title, a value only that section shows, where the JSON report holds it)
SECTIONS = {
    "variants": ("Variants", "hot-variant", "variants"),
    "comparisons": ("Candidates vs the baseline", "sign_flip_mid_p", "comparisons"),
    "errors": ("Errors by class", "connect refused to 127.0.0.1:9", "errors"),
    "grading_errors": ("Grading errors", "judge_unparseable", "errors"),
    "pairwise": ("Pairwise judge", "side-judge", "pairwise"),
    "judge_agreement": ("Judge agreement", "strict-judge", "judge_agreement"),
    "scenarios": ("Scenarios not passing", "--case c-fail --variant hot-variant", "reproducers"),
    "stopping": ("Stopping", "Sequential: look 2 of 4", "stopping"),
    "tuning": ("Tuning decisions", "top_p", "variations"),
    "flaky": ("Flaky cases", "c-flaky", "flaky_cases"),
    "identical": ("Identical outputs across repeats", "c-same", "identical_repeats"),
    "tools": ("Agents' tools", "search_docs", "variants"),
}


def variant(name: str, score: float) -> dict:
    return {
        "name": name, "trials": 10, "scored": 9, "errors": 1, "skipped": 0, "passed": 6, "mean_score": score,
        "ci95": [score - 0.1, score + 0.1], "pass_rate": 0.6, "pass_rate_ci95": [0.3, 0.8], "pass_at_k": None,
        "pass_hat_k": None, "strategy_score": score, "latency_ms": {"p50": 10.0, "p95": 20.0, "p99": 30.0},
        "tokens": {"in": 100, "out": 50}, "judge_tokens": 10, "cost_usd": 0.01,
    }  # fmt: skip


def full_report() -> RunReport:
    command = "engine run exp.toml --case c-fail --variant hot-variant --seed 7"
    pairwise = {
        "grader": "side-judge", "variant": "hot-variant", "baseline": "baseline", "judged": 10, "wins": 6,
        "ties": 1, "losses": 3, "undecided": 0, "win_rate": 0.667, "p_value": 0.3, "significant": False,
        "picked_a": 5, "picked_b": 4, "position_a_rate": 0.556, "position_p_value": 1.0, "win_rate_as_a": 0.6,
        "win_rate_as_b": 0.7,
    }  # fmt: skip
    data = {
        "run_id": "r1", "experiment": "every-section", "status": "completed", "is_partial": False,
        "trials_total": 20, "trials_done": 20, "baseline": "baseline", "winner": "hot-variant",
        "winner_significant": True, "strategy": "mean", "budget_exhausted": [],
        "variants": [variant("baseline", 0.5),
                     {**variant("hot-variant", 0.7), "tool_calls_by_tool": {"search_docs": 3, "edit": 1}}],
        "comparisons": [{
            "candidate": "hot-variant", "baseline": "baseline", "metric": "score", "delta": 0.2,
            "ci95": [0.1, 0.3], "p_value": 0.01, "p_value_adjusted": 0.01, "test": "sign_flip_mid_p",
            "n_pairs": 10, "significant": True,
        }],
        "errors": [
            {"stage": "trial", "class": "connect", "count": 2, "sample": "connect refused to 127.0.0.1:9",
             "variants": {"baseline": 1, "hot-variant": 1}},
            {"stage": "grading", "class": "judge_unparseable", "count": 1, "sample": "no score in the answer",
             "variants": {"baseline": 1}},
        ],
        "pairwise": [pairwise],
        "judge_agreement": {"strict-judge": {"judged": 20, "unparseable": 1, "unparseable_rate": 0.05}},
        "scenarios": [{"variant": "hot-variant", "case": "c-fail", "verdict": "fail", "passes": 0,
                       "runs": 2}],
        "reproducers": [{"variant": "hot-variant", "case": "c-fail", "repeat": 1, "seed": 7,
                         "command": command}],
        "stopping": {"rule": "sequential", "looks_done": 2, "max_looks": 4, "stopped": "efficacy",
                     "level": 0.01, "fixed_design_trials": 40, "trials_saved": 20},
        "variations": [{"variant": "v1", "parameter": "top_p", "value": 0.9, "baseline_score": 0.5,
                        "candidate_score": 0.7, "delta": 0.2, "accepted": True, "p_value": 0.01}],
        "flaky_cases": [{"variant": "baseline", "case": "c-flaky", "passes": 1, "runs": 2}],
        "identical_repeats": [{"variant": "baseline", "case": "c-same", "repeats": 2}],
    }  # fmt: skip
    return msgspec.convert(data, RunReport)


def terminal(report: RunReport) -> str:
    console = Console(record=True, width=100, file=open("/dev/null", "w"))  # noqa: SIM115
    for renderable in report_renderables(report):
        console.print(renderable, soft_wrap=True)
    return console.export_text()


LIVE = {"status": "completed", "outcome": "completed with errors", "status_class": "status-warn", "total": 20,
        "done": 20, "rate_per_s": 0.0, "eta_s": None, "passed": 12, "failed": 6, "errors": 2,
        "errors_by_class": {"connect": 2}}  # fmt: skip
SURFACES = {
    "terminal": terminal,
    "markdown": lambda r: report_markdown(r).replace("\\", ""),  # Markdown escapes _ and -; read it unescaped
    "html file": lambda r: html.unescape(report_html(r)),
    "web run page": lambda r: html.unescape(run_html(r, LIVE, "")),
}


def test_the_structure_lists_every_section_the_report_has() -> None:
    report = full_report()
    assert set(SECTIONS) <= set(SECTION_KEYS)
    assert set(SECTIONS) <= {s.key for s in sections(report)}


@pytest.mark.parametrize("surface", SURFACES)
def test_every_surface_shows_every_section(surface: str) -> None:
    text = SURFACES[surface](full_report())
    for key, (title, value, _) in SECTIONS.items():
        assert title.lower() in text.lower(), f"{surface}: no {key} title ({title!r})"
        assert value in text, f"{surface}: the {key} section does not show {value!r}"


def test_the_html_surfaces_mark_each_section_alike() -> None:
    """The HTML file and the run page render the sections from one template: same ids, same order."""
    report = full_report()
    marks = [f'data-section="{key}"' for key in SECTION_KEYS if key in {s.key for s in sections(report)}]
    for page in (report_html(report), run_html(report, LIVE, "")):
        found = [m for m in marks if m in page]
        assert found == marks and sorted(found, key=page.index) == marks


def test_the_json_report_holds_every_section() -> None:
    data = json.loads(msgspec.json.encode(full_report()))
    for key, (_, value, field) in SECTIONS.items():
        assert data[field], f"json: {field} is empty"
        assert value in json.dumps(data[field]) or key == "stopping", f"json: {key} not in {field}"
