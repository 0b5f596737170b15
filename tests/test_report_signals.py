"""What a report says agrees with itself, in every format, and reads as people read figures: a lone
variant wins nothing, a table marks "tied best" when the summary says so, identical repeats are
named by variant, p-values carry three significant digits and money fixed decimals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.presentation.model import as_report
from engine.presentation.report.numbers import money, p_value
from engine.presentation.report.status import winner_line
from engine.presentation.report.tables import variant_label
from tests.conftest import run_engine

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def quickstart(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    cwd = tmp_path_factory.mktemp("signals")
    file = str(ROOT / "examples" / "quickstart.toml")
    for run_id, narrowing in (("all", []), ("lone", ["--variant", "hot"])):
        ran = run_engine("run", file, *narrowing, "--run-id", run_id, "-q", "--store", "st", cwd=cwd)
        assert ran.returncode == 0, ran.stderr.decode()
    shown = run_engine("report", "all", "--json", "--store", "st", cwd=cwd)
    return cwd, json.loads(shown.stdout)


def report_in(cwd: Path, run_id: str, *fmt: str) -> str:
    shown = run_engine("report", run_id, *fmt, "--store", "st", cwd=cwd, COLUMNS="100")
    assert shown.returncode == 0, shown.stderr.decode()
    return shown.stdout.decode()


def test_a_lone_variant_wins_nothing(quickstart: tuple[Path, dict]) -> None:
    cwd, _ = quickstart
    for fmt in ((), ("--markdown",)):
        text = report_in(cwd, "lone", *fmt)
        assert "none (one variant, hot: nothing to compare)" in text
        assert "(winner)" not in text and "(not significant)" not in text


def test_identical_repeats_are_named_by_variant_in_every_format(quickstart: tuple[Path, dict]) -> None:
    cwd, report = quickstart
    same = {r["variant"] for r in report["identical_repeats"]}
    assert same, "the quickstart's concise variant answers alike on every repeat"
    for fmt in ((), ("--markdown",), ("--format", "html")):
        text = report_in(cwd, "all", *fmt)
        assert "Identical outputs across repeats" in text or "identical outputs across repeats" in text
        for variant in same:
            cases = sum(r["variant"] == variant for r in report["identical_repeats"])
            assert f"{variant}: {cases} case(s)" in text


def test_a_table_marks_tied_best_when_the_summary_says_tied_best(quickstart: tuple[Path, dict]) -> None:
    _, report = quickstart
    tied = {**report, "winner": "concise", "tied_best": ["concise", "baseline"]}
    tied["runner_up_p_value"] = 0.265625
    tied, clear = as_report(tied), as_report({**report, "winner": "concise", "tied_best": []})
    said = "Tied best: concise, baseline (concise leads, not separated: p (raw) 0.266"
    assert winner_line(tied).startswith(said)
    assert variant_label(tied, "concise") == "concise (tied best)"
    assert variant_label(tied, "baseline") == "baseline (tied best)"
    assert variant_label(tied, "hot") == "hot"
    assert variant_label(clear, "concise") == "concise (winner)"


@pytest.mark.parametrize(
    ("value", "shown"), [(0.265625, "0.266"), (0.0107421875, "0.0107"), (1.0, "1.00"), (0.0004, "<0.001")]
)
def test_p_values_have_three_significant_digits(value: float, shown: str) -> None:
    assert p_value(value) == shown


@pytest.mark.parametrize(
    ("value", "shown"), [(3.72e-05, "0.000037"), (0.0, "0.000000"), (1234.5, "1,234.50")]
)
def test_money_has_fixed_decimals(value: float, shown: str) -> None:
    assert money(value) == shown
