"""`engine report --markdown` and `--html FILE`: the real CLI on a real run."""

from __future__ import annotations

import json
import os
import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from engine.presentation.markdown import md_escape, report_markdown
from tests.conftest import ROOT, SAFETY_S, run_engine
from tests.test_cli_run import experiment

ODD = "odd | <i>name</i>"
ODD_VARIANT = f'[[variants]]\nname = "{ODD}"\nparams = {{ temperature = 0.4 }}\n'
CHROMIUM = Path("/usr/bin/chromium")
VOID = {"meta", "link", "br", "hr", "img", "input", "col", "area", "base", "source", "wbr"}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    cwd = tmp_path_factory.mktemp("report")
    (cwd / "exp.toml").write_text(experiment(cases=6, repeats=2, extra=ODD_VARIANT))
    ran = run_engine("run", "exp.toml", "--json", "--run-id", "r1", "--store", "st", cwd=cwd)
    assert ran.returncode == 0, ran.stderr.decode()
    return cwd, json.loads(ran.stdout)


def test_markdown_report(store: tuple[Path, dict]) -> None:
    cwd, report = store
    result = run_engine("report", "r1", "--markdown", "--store", "st", cwd=cwd)
    assert result.returncode == 0, result.stderr.decode()
    md = result.stdout.decode()
    assert md.startswith("## capitals: run r1, completed\n")
    assert "| variant | trials | errors | score |" in md and "p95 ms" in md
    labels = ("baseline", "baseline (winner)", "baseline (tied best)")  # never "baseline (baseline)"
    assert any(f"| {label} | 12 | 0 |" in md for label in labels)
    assert "| candidate | delta | 95% CI | p (raw) | p (Holm) | test | significant |" in md
    assert "vs the baseline:" in md and "baseline baseline" not in md
    assert f"| {md_escape(ODD)} " in md and "<i>" not in md and "odd \\| &lt;i&gt;" in md
    winner = report["winner"] or "none"
    if report["tied_best"]:  # the winner leads but no test separates it from the runner-up
        assert f"**Tied best:** {md_escape(', '.join(report['tied_best']))} ({md_escape(winner)} leads" in md
        # the table says what the summary says: tied best, not a winner
        assert "(winner)" not in md and "tied best)" in md
    else:
        assert f"**Winner:** {md_escape(winner)}" in md
    rows = [line for line in md.splitlines() if line.startswith("| ")]
    widths = {len(re.split(r"(?<!\\)\|", row)) for row in rows[:4]}
    assert len(widths) == 1  # escaped pipes do not split cells


def test_markdown_flags_partial_runs_and_escapes_newlines() -> None:
    report = {
        "run_id": "r9", "experiment": "e", "status": "partial", "is_partial": True, "trials_total": 10,
        "trials_done": 3, "baseline": "a\nb", "winner": None, "winner_significant": False,
        "variants": [], "comparisons": [], "flaky_cases": [], "budget_exhausted": ["max_trials"],
        "strategy": "mean",
    }  # fmt: skip
    md = report_markdown(report)
    assert "run r9, partial\n" in md and "3 of 10 trials" in md and "Budget exhausted: max\\_trials" in md
    assert md_escape("x|y\nz") == "x\\|y z"


def test_markdown_marks_only_warnings_as_warnings() -> None:
    report = {
        "run_id": "r9", "experiment": "e", "status": "completed", "is_partial": False, "trials_total": 4,
        "trials_done": 4, "baseline": "a", "winner": None, "winner_significant": False, "variants": [],
        "comparisons": [], "flaky_cases": [], "budget_exhausted": [], "grading": 1, "grading_name": "labels",
        "strategy": "mean",
        "warnings": ["graders[0]: contains cannot score 2 of 3 cases"],
    }  # fmt: skip
    md = report_markdown(report)
    assert "> **Warning:** graders\\[0\\]: contains cannot score 2 of 3 cases" in md
    assert "> Grading round 1 (labels)" in md and "Warning:** Warning" not in md


class Tables(HTMLParser):
    """Every table's header cells and each body row's cells, as text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[tuple[list[str], list[list[str]]]] = []
        self._cell: list[str] | None = None
        self._in_head = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append(([], []))
        elif tag == "thead":
            self._in_head = True
        elif tag == "tr" and not self._in_head:
            self.tables[-1][1].append([])
        elif tag in ("th", "td"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "thead":
            self._in_head = False
        elif tag in ("th", "td") and self._cell is not None:
            text = "".join(self._cell).strip()
            (self.tables[-1][0] if tag == "th" else self.tables[-1][1][-1]).append(text)
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def html_tables(html: str) -> list[tuple[list[str], list[list[str]]]]:
    parser = Tables()
    parser.feed(html)
    return parser.tables


class Balanced(HTMLParser):
    """Fails on a close tag that does not match the innermost open element."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.seen: set[str] = set()
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.seen.add(tag)
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.seen.add(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes {self.stack[-1:]}"
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_html_report_is_one_self_contained_file(store: tuple[Path, dict]) -> None:
    cwd, report = store
    result = run_engine("report", "r1", "--html", "out.html", "--store", "st", cwd=cwd)
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.decode().strip() == "out.html"
    html = (cwd / "out.html").read_text()
    # its own script and data are inline (it opens from file://): nothing is fetched
    assert "<svg" in html and re.findall(r"<script[^>]*>", html, re.I) == [
        '<script type="application/json" id="file-data">',
        "<script>",
    ]
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", html, re.I)
    assert "http://" not in html and "https://" not in html
    assert "<i>name</i>" not in html and "odd | &lt;i&gt;name&lt;/i&gt;" in html
    parser = Balanced()
    parser.feed(html)
    parser.close()
    assert parser.stack == [] and {"html", "svg", "rect", "table"} <= parser.seen
    text = " ".join(parser.text)
    assert "winner" in text.lower() and "baseline" in text and ODD in text
    assert html.count("<rect ") == sum(v["strategy_score"] is not None for v in report["variants"])
    tables = html_tables(html)
    assert tables and all(len(row) == len(header) for header, rows in tables for row in rows)
    header, rows = tables[0]
    by_column = dict(zip(header, rows[0], strict=True))
    first = report["variants"][0]
    # each value sits under its own header (a missing cell once shifted every later column)
    assert by_column["trials"] == str(first["trials"]) and by_column["errors"] == str(first["errors"])
    assert by_column["p/f/fl/e"] == "/".join(
        str(first["cases"][k]) for k in ("passed", "failed", "flaky", "errors")
    )


def test_the_html_file_carries_the_output_matrix(store: tuple[Path, dict]) -> None:
    """Shared without a server: each case x variant cell holds its verdict and its output."""
    cwd, report = store
    assert run_engine("report", "r1", "--html", "matrix.html", "--store", "st", cwd=cwd).returncode == 0
    page = (cwd / "matrix.html").read_text()
    matrix = page.split('data-section="matrix"')[1]
    cell = r'<td class="cell-box (\w+)" data-verdict="\w+" data-variant="[^"]*"[^>]*>(.*?)</td>'
    cells = re.findall(cell, matrix, re.S)
    assert len(cells) == 6 * len(report["variants"])  # six cases, every variant
    verdicts = {(s["variant"], s["case"]): s["verdict"] for s in report["scenarios"]}
    assert sorted(v for v, _ in cells) == sorted(verdicts.values())  # the report's verdicts
    outputs = [re.search(r'<pre class="out">(.*?)</pre>', body, re.S) for _, body in cells]
    assert all(outputs) and {o.group(1) for o in outputs if o} <= {f"City{i}" for i in range(6)} | {
        "I am not sure."}  # fmt: skip


def test_only_one_output_option(store: tuple[Path, dict]) -> None:
    cwd, _ = store
    result = run_engine("report", "r1", "--json", "--markdown", "--store", "st", cwd=cwd)
    assert result.returncode == 2 and b"only one of" in result.stderr and b"Traceback" not in result.stderr


def test_json_output_unchanged(store: tuple[Path, dict]) -> None:
    cwd, report = store
    result = run_engine("report", "r1", "--json", "--store", "st", cwd=cwd)
    assert json.loads(result.stdout) == report


@pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is not installed")
def test_html_renders_in_headless_chromium(store: tuple[Path, dict], tmp_path: Path) -> None:
    cwd, _ = store
    assert run_engine("report", "r1", "--html", "shot.html", "--store", "st", cwd=cwd).returncode == 0
    png = tmp_path / "shot.png"
    subprocess.run(
        [
            str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={png}", "--window-size=1200,900",
            (cwd / "shot.html").as_uri(),
        ],
        capture_output=True, timeout=SAFETY_S, check=False,
    )  # fmt: skip
    assert png.exists() and png.stat().st_size > 5 * 1024


def test_every_registered_format_writes_the_same_report(store: tuple[Path, dict]) -> None:
    cwd, report = store
    for fmt, marker in (("markdown", "## capitals"), ("html", "<!DOCTYPE html>"), ("json", '"run_id"')):
        printed = run_engine("report", "r1", "--format", fmt, "--store", "st", cwd=cwd)
        assert printed.returncode == 0 and marker in printed.stdout.decode(), printed.stderr
        written = run_engine("report", "r1", "--format", fmt, "--out", f"r.{fmt}", "--store", "st", cwd=cwd)
        assert written.returncode == 0 and marker in (cwd / f"r.{fmt}").read_text()
    assert json.loads((cwd / "r.json").read_text()) == report
    unknown = run_engine("report", "r1", "--format", "pdf", "--store", "st", cwd=cwd)
    assert unknown.returncode == 2 and b"markdown, html, json" in unknown.stderr


def test_a_report_format_from_another_package(store: tuple[Path, dict], tmp_path: Path) -> None:
    """A distribution declaring an `engine.formats` entry point adds a report format: it receives the
    typed report, and `engine report --format NAME` lists and runs it like a built-in one."""
    cwd, report = store
    plugin = tmp_path / "plugin"
    (plugin / "shout_format-0.1.dist-info").mkdir(parents=True)
    (plugin / "shout_format-0.1.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: shout-format\nVersion: 0.1\n"
    )
    (plugin / "shout_format-0.1.dist-info" / "entry_points.txt").write_text(
        "[engine.formats]\nshout = shout_format:report_shout\n"
    )
    (plugin / "shout_format.py").write_text(
        "def report_shout(report):\n"
        "    return f'{report.experiment.upper()}: {len(report.variants)} VARIANTS, {report.winner}\\n'\n"
    )
    env = {"PYTHONPATH": os.pathsep.join([str(plugin), str(ROOT)])}
    shouted = run_engine("report", "r1", "--format", "shout", "--store", "st", cwd=cwd, **env)
    assert shouted.returncode == 0, shouted.stderr.decode()
    assert shouted.stdout.decode() == f"CAPITALS: {len(report['variants'])} VARIANTS, {report['winner']}\n"
    unknown = run_engine("report", "r1", "--format", "nope", "--store", "st", cwd=cwd, **env)
    assert unknown.returncode == 2 and b"markdown, html, json, shout" in unknown.stderr
