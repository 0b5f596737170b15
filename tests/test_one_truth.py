"""One truth on every surface: real runs in one store (a pairwise judge behind a real HTTP server, a
race, a tuning session, a run with errors, a run whose every trial errored, two runs compared with
a gate), each rendered by every surface (the terminal, Markdown, the HTML file, the web run page,
the JSON report, `engine status`), and every figure held against the JSON report's own field.

FIGURES is the one table of what a report's tables show: per section, each column's label and the
JSON field it writes. A surface that shows a column this table does not know, or leaves one out,
or writes another value under a label, fails here: a figure is added to every surface or to none.
"""

from __future__ import annotations

import html
import json
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest
from rich.console import Console

from engine.actors.targets.target_protocol import TargetRequest
from engine.api import open_engine, spec_from_dict
from engine.events.graders import ContainsGraderSpec
from engine.presentation.html_file import file_matrix, report_html
from engine.presentation.markdown import report_markdown
from engine.presentation.report.numbers import fmt, interval, money, p_value, signed
from engine.presentation.sections import SECTION_KEYS
from engine.presentation.terminal import report_renderables
from engine.runtime.regrade import regrade_run
from engine.runtime.run_status import run_status
from engine.views.compare.comparison import compare_runs
from engine.web.context import WebContext
from engine.web.pages_more import compare_body
from engine.web.run_page import run_body
from tests.fakes.openai_server import open_fake_openai
from tests.test_pairwise import prefers_good
from tests.test_pairwise import spec as pairwise_spec
from tests.test_pairwise import subject as pairwise_subject
from tests.test_race import race_spec
from tests.test_race import subject as race_subject
from tests.test_transcript import AGENT as TRANSCRIPT_AGENT
from tests.test_tuning import peaked, tune_spec

Row = dict[str, Any]
Figure = Callable[[Row], str]


def cases(v: Row) -> str:
    c = v["cases"]
    text = "/".join(str(c[k]) for k in ("passed", "failed", "flaky", "errors"))
    return text + (f" +{c['ungraded']} ungraded" if c["ungraded"] else "")


def yes(flag: bool) -> str:
    return "yes" if flag else "no"


# section: (the JSON list its rows come from, the columns that name a row, {label: figure from JSON})
FIGURES: dict[str, tuple[str, int, dict[str, Figure]]] = {
    "variants": ("variants", 1, {
        "variant": lambda v: v["name"], "trials": lambda v: str(v["trials"]),
        "errors": lambda v: str(v["errors"]),
        "score": lambda v: fmt(v["strategy_score"]), "score 95% CI": lambda v: interval(v["ci95"]),
        "pass": lambda v: fmt(v["pass_rate"]), "pass 95% CI": lambda v: interval(v["pass_rate_ci95"]),
        "p/f/fl/e": cases,
    }),
    "spend": ("variants", 1, {
        "variant": lambda v: v["name"], "p50 ms": lambda v: fmt(v["latency_ms"]["p50"], 1),
        "p95 ms": lambda v: fmt(v["latency_ms"]["p95"], 1),
        "p99 ms": lambda v: fmt(v["latency_ms"]["p99"], 1),
        "tokens in": lambda v: str(v["tokens"]["in"]), "tokens out": lambda v: str(v["tokens"]["out"]),
        "judge tokens": lambda v: str(v["judge_tokens"]), "cost $": lambda v: money(v["cost_usd"]),
    }),
    "comparisons": ("comparisons", 1, {
        "candidate": lambda c: c["candidate"], "delta": lambda c: signed(c["delta"]),
        "95% CI": lambda c: interval(c["ci95"]), "p (raw)": lambda c: p_value(c["p_value"]),
        "p (Holm)": lambda c: p_value(c["p_value_adjusted"]), "test": lambda c: c["test"],
        "significant": lambda c: yes(c["significant"]),
    }),
    "pairwise": ("pairwise", 2, {
        "candidate": lambda p: p["variant"], "judge": lambda p: p["grader"], "W": lambda p: str(p["wins"]),
        "T": lambda p: str(p["ties"]), "L": lambda p: str(p["losses"]),
        "undecided": lambda p: str(p["undecided"]),
        "win rate": lambda p: fmt(p["win_rate"]),
        "cases +/-/=": lambda p: f"{p['cases_preferring']}/{p['cases_against']}/{p['cases_even']}",
        "p (raw)": lambda p: p_value(p["p_value"]), "A picked": lambda p: fmt(p["position_a_rate"]),
        "lean p (raw)": lambda p: p_value(p["position_p_value"]),
    }),
    "tuning": ("variations", 1, {
        "variant": lambda v: v["variant"], "parameter": lambda v: v["parameter"],
        "value": lambda v: str(v["value"]),
        "baseline": lambda v: fmt(v["baseline_score"]), "candidate": lambda v: fmt(v["candidate_score"]),
        "delta": lambda v: signed(v["delta"]), "p (raw)": lambda v: p_value(v["p_value"]),
        "decision": lambda v: "accepted" if v["accepted"] else (
            f"dropped in round {v['dropped_round']}" if v["dropped_round"] else "rejected"),
    }),
    "flaky": ("flaky_cases", 2, {
        "variant": lambda f: f["variant"], "case": lambda f: f["case"],
        "passed": lambda f: f"{f['passes']}/{f['runs']}",
    }),
}  # fmt: skip
# a section's rows in another shape (judges keyed by name): the JSON rows the table is made of
JSON_ROWS: dict[str, Callable[[Row], list[Row]]] = {
    "judge_agreement": lambda r: [{"name": n, **j} for n, j in r["judge_agreement"].items()],
}
FIGURES["judge_agreement"] = ("judge_agreement", 1, {
    "judge": lambda j: j["name"], "judged": lambda j: str(j["judged"]),
    "unparseable": lambda j: str(j["unparseable"]),
    "unparseable rate": lambda j: fmt(j["unparseable_rate"]), "mean spread": lambda j: fmt(j["mean_spread"]),
    "max spread": lambda j: fmt(j["max_spread"]),
})  # fmt: skip


def json_rows(data: Row, section: str) -> list[Row]:
    field = FIGURES[section][0]
    return JSON_ROWS[section](data) if section in JSON_ROWS else data[field]


def expected_rows(data: Row, section: str) -> list[list[str]]:
    return [[figure(row) for figure in FIGURES[section][2].values()] for row in json_rows(data, section)]


# --- the runs ---------------------------------------------------------------------------------------


def flaky_agent(request: TargetRequest) -> str:
    """The candidate's agent crashes on every third case; both answer from the trial's seed."""
    if request.variant.name == "careful" and int(request.case.id[1:]) % 3 == 0:
        raise ConnectionError("tool server refused the connection")
    return "yes" if request.seed % 10 < (7 if request.variant.name == "careful" else 5) else "no"


def broken_agent(request: TargetRequest) -> str:
    raise TimeoutError("the agent never answered")


def agent_spec(name: str, seed: int, call: str = "flaky_agent") -> Any:
    return spec_from_dict({
        "name": name, "seed": seed, "target": {"kind": "python", "callable": call},
        "params": {"temperature": 0.2, "max_tokens": 64},
        "variants": [{"name": "plain"}, {"name": "careful", "params": {"temperature": 0.9}}],
        "cases": [{"id": f"c{i}", "prompt": "p", "expected": "yes"} for i in range(12)],
        "repeat": {"count": 3}, "graders": [{"kind": "exact"}],
        # the in-process agent's latency is the machine's (a loaded CI runner's pauses, retries'
        # jittered backoff): never what these runs' gate decides on
        "gate": {"max_p95_latency_increase": 100.0},
    })  # fmt: skip


def transcript_spec(where: Path) -> Any:
    """A command agent that writes its transcript (tool calls per tool in the report), and a variant
    whose agent crashes (exit 3: an error of its class)."""
    script = where / "agent.py"
    script.write_text(TRANSCRIPT_AGENT)
    crash = [sys.executable, "-c", "import sys; sys.exit(3)"]
    return spec_from_dict({
        "name": "tools", "seed": 3, "target": {"kind": "command", "command": [sys.executable, str(script)]},
        "variants": [{"name": "agent"}, {"name": "crashing", "target": {"command": crash}}],
        "cases": [{"id": f"c{i}", "prompt": f"What is the refund policy? ({i})", "expected": "30 days"}
                  for i in range(3)],
        "graders": [{"kind": "contains"}],
    })  # fmt: skip


CALLABLES = {
    "subject": race_subject,
    "peaked": peaked,
    "flaky_agent": flaky_agent,
    "broken_agent": broken_agent,
}
RUNS = ("judge", "race", "tune", "agent", "broken", "tools")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import trio

    where = tmp_path_factory.mktemp("one-truth")

    async def build() -> None:
        async with open_fake_openai(answer=prefers_good) as server:
            async with open_engine(where, callables={**CALLABLES, "subject": pairwise_subject}) as eng:
                await eng.run(pairwise_spec(server.base_url, cases=6), run_id="judge")
                # a regrade round over the stored outputs: the report every surface shows is its
                await regrade_run(eng.log, "judge", [ContainsGraderSpec(value="GOOD")], name="strict")
        async with open_engine(where, callables=CALLABLES) as eng:
            await eng.run(race_spec(cases=24), run_id="race")
            await eng.run(tune_spec("grid", max_experiments=3), run_id="tune")
            await eng.run(agent_spec("agents", 5), run_id="agent")
            await eng.run(agent_spec("agents", 6), run_id="agent2")
            await eng.run(agent_spec("broken", 5, "broken_agent"), run_id="broken")
            await eng.run(transcript_spec(where), run_id="tools")

    trio.run(build)
    return where


@pytest.fixture(scope="module")
def ctx(store: Path) -> Any:
    from engine.store.log.event_log import EventLog

    log = EventLog(store)
    yield WebContext(log)
    log.close()


# --- the surfaces -----------------------------------------------------------------------------------


def terminal(data: bytes, width: int = 250) -> str:
    """Wide enough that no row folds: the figures are read a row per line."""
    console = Console(record=True, width=width, file=open("/dev/null", "w"))  # noqa: SIM115
    for renderable in report_renderables(data):
        console.print(renderable, soft_wrap=True)
    return console.export_text()


def status_text(ctx: Any, run_id: str, capsys: pytest.CaptureFixture[str]) -> str:
    from engine.cli.render import print_status

    print_status(run_status(ctx.log, run_id, time.time()), as_json=False)
    return capsys.readouterr().out


def surfaces(ctx: Any, run_id: str) -> dict[str, str]:
    data = ctx.report(run_id)
    report = msgspec.json.decode(data)
    return {
        "terminal": terminal(data),
        "markdown": report_markdown(data),
        "html file": report_html(data, file_matrix(ctx.log, run_id, data)),
        "web run page": run_body(ctx, run_id, "")[1],
        "json": json.dumps(report),
    }


def text_of(cell: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", cell)).strip()


def html_sections(page: str) -> dict[str, list[list[str]]]:
    """Each section's table as rows of cell texts (the header first)."""
    out = {}
    for key, body in re.findall(
        r'class="report-section"[^>]*data-section="(\w+)">(.*?)</section>', page, re.S
    ):
        rows = re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)
        cells = [[text_of(c) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)]
                 for row in rows]  # fmt: skip
        if cells:
            out[key] = cells
    return out


def markdown_sections(text: str, titles: dict[str, str]) -> dict[str, list[list[str]]]:
    out = {}
    for block in text.split("\n### ")[1:]:
        title, _, rest = block.partition("\n")
        key = titles[title.replace("\\", "")]
        rows = [line for line in rest.splitlines() if line.startswith("|") and not line.startswith("|:")]
        rows = [r for r in rows if not re.fullmatch(r"\|[-:|]+\|", r)]
        if rows:
            out[key] = [
                [html.unescape(c.replace("\\", "")).strip() for c in r.strip("|").split(" | ")] for r in rows
            ]
    return out


def on_one_line(text: str, cells: list[str]) -> bool:
    """The cells in this order on one line of the terminal's text, apart by spaces only."""
    pattern = r"\s+".join(re.escape(c) for c in cells)
    return any(re.search(rf"(^|\s){pattern}(\s|$)", line) for line in text.splitlines())


def titles_of(data: bytes) -> dict[str, str]:
    from engine.presentation.sections import sections

    return {s.title: s.key for s in sections(msgspec.json.decode(data, type=_report_type()))}


def _report_type() -> Any:
    from engine.events.report import RunReport

    return RunReport


def row_name(cells: list[str], n: int) -> list[str]:
    """The columns naming a row, the marks a name may carry ("(baseline, winner)") left off."""
    return [re.sub(r" \((baseline|winner|tied best|baseline, \w[\w ]*)\)$", "", c) for c in cells[:n]]


# --- the tests ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("run_id", RUNS)
def test_every_table_shows_the_same_figures_under_the_same_labels(ctx: Any, run_id: str) -> None:
    data = ctx.report(run_id)
    report = msgspec.json.decode(data)
    shown = surfaces(ctx, run_id)
    tables = {
        "html file": html_sections(shown["html file"]),
        "web run page": html_sections(shown["web run page"]),
        "markdown": markdown_sections(shown["markdown"], titles_of(data)),
    }
    keys = {key for found in tables.values() for key in found} & set(SECTION_KEYS)  # not the file's matrix
    assert {"variants", "spend"} <= keys
    unknown = keys - set(FIGURES) - {"tags", "labels"}
    assert not unknown, f"sections with figures this test does not know: {unknown}"
    for section in keys & set(FIGURES):
        labels = list(FIGURES[section][2])
        expected = expected_rows(report, section)
        names = FIGURES[section][1]
        for surface, found in tables.items():
            assert section in found, f"{run_id}: {surface} has no {section} table"
            header, *rows = found[section]
            assert header == labels, f"{run_id} {section}: {surface} labels {header}, the figures {labels}"
            got = [row_name(r, names) + r[names:] for r in rows]
            assert got == expected[: len(got)] and got, f"{run_id} {section} on {surface}"
        term = shown["terminal"]
        assert on_one_line(term, labels), f"{run_id} {section}: terminal labels"
        for row in expected[:10]:  # the terminal lists the first rows of a long list
            assert on_one_line(term, row[names:]), f"{run_id} {section}: terminal row {row}"


def json_word(report: Row) -> str:
    """The JSON report's status word: its `outcome` when it ran to the end and failed, else its status,
    "with errors" when some trial errored."""
    errors = sum(v["errors"] for v in report["variants"])
    if "outcome" in report:
        return report["outcome"]
    return report["status"] + (" with errors" if report["status"] == "completed" and errors else "")


def status_word(surface: str, text: str, run_id: str) -> str:
    found = {
        "terminal": rf"run {run_id}  ([a-z ]+?)(  \(partial\))?\n",
        "markdown": rf"run {run_id}, ([a-z ]+?)( \(partial\))?\n",
        "html file": r'data-field="status">([a-z ]+)<',
        "web run page": r'data-field="status">([a-z ]+)<',
    }[surface]
    match = re.search(found, text)
    assert match, f"{surface}: no status"
    return match.group(1)


@pytest.mark.parametrize("run_id", RUNS)
def test_the_status_winner_and_errors_read_the_same_everywhere(
    ctx: Any, run_id: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from engine.presentation.report.status import status_lines, winner_line

    data = ctx.report(run_id)
    report = msgspec.json.decode(data)
    shown = surfaces(ctx, run_id)
    words = {surface: status_word(surface, text, run_id) for surface, text in shown.items()
             if surface != "json"}  # fmt: skip
    status = status_text(ctx, run_id, capsys)
    word = json_word(report)
    assert status.split("  ")[2] == word, status
    assert set(words.values()) == {word}, words
    typed = msgspec.json.decode(data, type=_report_type())
    winner = winner_line(typed)
    said = status_lines(typed)  # partial, errors, budgets, the grading round, warnings
    for surface, text in shown.items():
        if surface == "json":
            continue
        plain = html.unescape(text).replace("\\", "").replace("**", "")
        assert winner in plain, f"{surface}: {winner!r}"
        assert all(line in plain for line in said), f"{surface}: {said}"
        for err in report["errors"]:
            unit = "trials" if err["stage"] == "trial" else "grades"
            assert f"{err['class']} ({err['count']} {unit};" in plain, f"{surface}: {err['class']}"
    # counts: every finished trial is passed, failed or in error, on the status and the progress strip
    passed = sum(v["passed"] for v in report["variants"])
    errors = sum(v["errors"] for v in report["variants"])
    failed = sum(v["scored"] - v["passed"] for v in report["variants"])
    line = f"passed {passed} · failed {failed} · errors {errors}"
    assert line in status, status
    strip = re.sub(r"<[^>]+>", "", shown["web run page"])
    assert f"passed {passed} · failed {failed} · errors {errors}" in strip


def test_a_run_whose_every_trial_errored_is_failed_and_says_why_nothing_compares(ctx: Any) -> None:
    data = ctx.report("broken")
    report = msgspec.json.decode(data)
    assert report["status"] == "completed" and report["outcome"] == "failed"
    page = run_body(ctx, "broken", "")[1]
    assert "status-bad" in page and "status-ok" not in page
    assert "one variant" not in page and "No comparisons: no candidate has a score" in page
    assert "status-bad" in report_html(data)


def test_the_chart_stars_only_a_significant_winner_and_marks_tied_best(ctx: Any) -> None:
    for run_id in RUNS:
        data = ctx.report(run_id)
        report = msgspec.json.decode(data)
        chart = report_html(data).split('class="score-chart"')[1].split("</svg>")[0]
        starred = report["winner"] is not None and report["winner_significant"] and not report["tied_best"]
        assert ("\u2605" in chart) == starred, run_id
        for name in report["tied_best"]:
            assert f"= {name}" in chart and "tied best" in report_html(data), run_id


@pytest.mark.parametrize("cand", ["agent2", "broken"])  # a gate that passes, one that fails
def test_compare_shows_raw_and_holm_p_alike_on_the_terminal_and_the_web(
    ctx: Any, capsys: pytest.CaptureFixture[str], cand: str
) -> None:
    from engine.cli.compare.gate import print_comparison
    from engine.presentation.compare_table import metric_tables

    result = compare_runs(ctx.log, "agent", cand)  # the candidate's gate, as the web page's
    print_comparison(result, as_json=False)
    term = capsys.readouterr().out
    page = compare_body(ctx, "agent", cand, "")[1]
    web = html_sections_any(page)
    tables = metric_tables(result.metrics)
    assert [pair for pair, _, _ in tables] == ["plain", "careful"]
    assert result.regressed == (cand == "broken")  # the gate's verdict, the same on both
    if result.regressed:
        assert "REGRESSED: " in term and "REGRESSED: " in html.unescape(page)
    else:
        assert "no regression" in term and "Gate passes: no regression." in page
    for pair, header, rows in tables:
        raw, holm = header.index("p (raw) / ratio CI"), header.index("p (Holm)")
        assert on_one_line(term, header) and all(f"<th>{h}</th>" in page for h in header)
        metrics = [m for m in result.metrics if m.variant == pair]
        for m, row in zip(metrics, rows, strict=True):
            if m.ratio_ci is None:  # each paired metric's p, raw and adjusted, as the JSON holds them
                assert [row[raw], row[holm]] == [p_value(m.p_value), p_value(m.p_value_adjusted)]
            assert on_one_line(term, row), row
            assert row in web, row


def html_sections_any(page: str) -> list[list[str]]:
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", page, re.S)
    return [[text_of(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", r, re.S)]
            for r in rows]  # fmt: skip


@pytest.mark.parametrize("run_id", RUNS)
def test_every_line_of_every_section_reads_the_same_everywhere(ctx: Any, run_id: str) -> None:
    """The sections' lines (errors by class, scenarios, the parameters each target received, ...)."""
    from engine.presentation.sections import sections

    data = ctx.report(run_id)
    shown = surfaces(ctx, run_id)
    plain = {
        "terminal": shown["terminal"],
        "markdown": html.unescape(shown["markdown"].replace("\\", "")),
        "html file": html.unescape(shown["html file"]),
        "web run page": html.unescape(shown["web run page"]),
    }
    said = [line.partition("  rerun: ")[0] for s in sections(msgspec.json.decode(data, type=_report_type()))
            for line in s.lines]  # fmt: skip
    for surface, text in plain.items():
        missing = [line for line in said if line not in text]
        assert not missing, f"{run_id}: {surface} leaves out {missing}"


def test_each_variant_shows_the_parameters_its_target_received(ctx: Any) -> None:
    """The experiment's params with the variant's own over them, in the JSON and on every surface."""
    report = msgspec.json.decode(ctx.report("agent"))
    sent = {v["name"]: v.get("sent_params", v["params"]) for v in report["variants"]}
    assert sent == {"plain": {"temperature": 0.2, "max_tokens": 64},
                    "careful": {"temperature": 0.9, "max_tokens": 64}}  # fmt: skip
    line = "careful: " + ", ".join(f"{k}={v}" for k, v in sent["careful"].items())
    for surface, text in surfaces(ctx, "agent").items():
        if surface != "json":
            assert line in html.unescape(text).replace("\\", ""), surface


def test_the_regrade_round_is_the_one_every_surface_shows(ctx: Any) -> None:
    report = msgspec.json.decode(ctx.report("judge"))
    assert (report["grading"], report["grading_name"]) == (1, "strict")
    for surface, text in surfaces(ctx, "judge").items():
        if surface != "json":
            assert "Grading round 1 (strict)" in html.unescape(text), surface


def test_an_agents_transcripts_and_crashes_read_the_same_everywhere(ctx: Any) -> None:
    report = msgspec.json.decode(ctx.report("tools"))
    agent, crashing = report["variants"]
    assert agent["tool_calls_by_tool"] and crashing["errors"] == 3
    line = "agent calls by tool: " + ", ".join(f"{t} {n}" for t, n in agent["tool_calls_by_tool"].items())
    for surface, text in surfaces(ctx, "tools").items():
        if surface != "json":
            plain = html.unescape(text).replace("\\", "")
            assert line in plain and "agent_exit (3 trials;" in plain, surface
