"""The quick start's walk-through at 100 columns: every line engine prints to a terminal (tables,
warnings, hints) fits in 100 columns, but a command printed whole on its own line for a person to
copy (and an error, one line in a pipe: a terminal folds it)."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

from tests.conftest import ROOT, run_engine

WIDTH = 100
WALK = (
    "run quickstart.toml --run-id q1 --store st",
    "run quickstart.toml --run-id q2 --seed 8 --store st",
    "validate quickstart.toml",
    "report q1 --store st",
    "list --store st",
    "status q1 --store st",
    "history quickstart-concise-vs-verbose --store st",
    "compare q1 q2 --store st",
    "mark q1 green --store st",
    "compare last-green q2 --gate --store st",
    "check --store st",
    "run nothing.toml --store st",
    "report nope --store st",
)


def too_wide(text: str) -> list[str]:
    """Lines over 100 columns but a whole command, and an error: one line in a pipe (a terminal folds
    it), as tests of one-line errors hold."""
    lines = text.splitlines()
    whole = ("engine ", "error: ")
    return [line for line in lines if len(line) > WIDTH and not line.strip().startswith(whole)]


def test_the_quick_start_walk_through_fits_100_columns(tmp_path: Path) -> None:
    shutil.copy(ROOT / "examples" / "quickstart.toml", tmp_path)
    for command in WALK:
        done = run_engine(*shlex.split(command), cwd=tmp_path, COLUMNS=str(WIDTH))
        wide = too_wide(done.stdout.decode() + done.stderr.decode())
        assert not wide, f"engine {command}: {wide}"


def test_a_report_of_seven_variants_keeps_its_labels_whole_at_100_columns() -> None:
    import msgspec
    from rich.console import Console

    from engine.events.report import RunReport
    from engine.presentation.terminal import report_renderables
    from tests.test_report_structure import variant

    names = [f"prompt-variant-{i}-{'x' * i}" for i in range(7)]
    tags = {"geo": {"cases": 3, "mean_score": 0.5, "pass_rate": 0.6},
            "math-and-logic": {"cases": 2, "mean_score": 0.4, "pass_rate": 0.5}}  # fmt: skip
    variants = [{**variant(n, 0.5 + i / 20), "by_tag": tags} for i, n in enumerate(names)]
    report = msgspec.convert({
        "run_id": "r", "experiment": "seven", "status": "completed", "is_partial": False, "trials_total": 70,
        "trials_done": 70, "baseline": names[0], "winner": names[6], "winner_significant": False,
        "variants": variants, "comparisons": [], "flaky_cases": [], "budget_exhausted": [],
        "strategy": "mean",
    }, RunReport)  # fmt: skip
    console = Console(record=True, width=WIDTH, file=open("/dev/null", "w"))  # noqa: SIM115
    for renderable in report_renderables(report):
        console.print(renderable)
    text = console.export_text()
    assert not too_wide(text)
    for name in names:  # a variant's name on one line, never split mid-word
        assert re.search(rf"(^|\s){re.escape(name)}(\s|$)", text, re.M), name
    assert "math-and-logic" in text


def test_a_long_list_says_once_how_many_more() -> None:
    import msgspec
    from rich.console import Console

    from engine.events.report import RunReport
    from engine.presentation.markdown import report_markdown
    from engine.presentation.terminal import report_renderables
    from tests.test_report_structure import variant

    flaky = [{"variant": "a", "case": f"c{i:03d}", "passes": 1, "runs": 2} for i in range(120)]
    report = msgspec.convert({
        "run_id": "r", "experiment": "long", "status": "completed", "is_partial": False, "trials_total": 240,
        "trials_done": 240, "baseline": "a", "winner": "a", "winner_significant": False,
        "variants": [variant("a", 0.5)], "comparisons": [], "flaky_cases": flaky, "budget_exhausted": [],
        "strategy": "mean",
    }, RunReport)  # fmt: skip
    console = Console(record=True, width=WIDTH, file=open("/dev/null", "w"))  # noqa: SIM115
    for renderable in report_renderables(report):
        console.print(renderable)
    text = console.export_text()
    assert text.count("more (engine report --json lists them)") == 1 and "...and 110 more" in text
    markdown = report_markdown(report)
    assert markdown.count("more (engine report --json lists them)") == 1 and "...and 70 more" in markdown
