"""The plain table draws what rich draws, byte for byte, wherever it draws at all."""

from __future__ import annotations

import io
import re
import string

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from rich.console import Console

from engine.presentation.plain_table import BOLD, ITALIC, plain_text, render, styled_output
from engine.presentation.term_table import Columns, table

ANSI = re.compile(r"\x1b\[[0-9;]*m")
# printable ASCII without `[` (markup): cells with colons and letters exercise the emoji check
CHARS = st.sampled_from(string.ascii_letters[:6] + string.digits[:4] + " :-_+.()")
TEXT = st.text(CHARS, max_size=30)
FIGURE = st.text(CHARS, max_size=12)


def rich_output(title: str, header: list[str], rows: list[list[str]], left: Columns, width: int) -> str:
    console = Console(width=width, file=io.StringIO(), force_terminal=False, legacy_windows=False)
    console.print(table(title, header, rows, left))
    return console.file.getvalue()  # type: ignore[attr-defined]


@st.composite
def tables(draw: st.DrawFn) -> tuple[str, list[str], list[list[str]], Columns, int]:
    n = draw(st.integers(1, 6))
    left: Columns = draw(st.integers(0, n) | st.frozensets(st.integers(0, n - 1)))
    texts = set(range(left)) if isinstance(left, int) else left
    cell = [TEXT if i in texts else FIGURE for i in range(n)]
    header = [draw(c) for c in cell]
    rows = draw(st.lists(st.tuples(*cell).map(list), max_size=5))
    return draw(st.text(CHARS, max_size=60)), header, rows, left, draw(st.integers(20, 100))


@given(tables())
@example(("t", ["name", "n"], [], 1, 100))  # no rows
@example(("", ["name"], [["x"]], 1, 100))  # one column, no title
@example(("runs", ["name", "n"], [["a" * 30, "1"], ["b", "22"]], 1, 100))  # a cell of exactly 30
@example(("a title far longer than the table", ["a", "n"], [["x", "1"]], {0}, 100))  # rich wraps it
@example(("", ["a", "b"], [["x" * 30, "y" * 30], ["1", "2"]], 2, 62))  # exactly as wide as the console
@example(("", ["a", "b"], [["x" * 30, "y" * 30]], 2, 61))  # one column too wide: rich shrinks it
@example(("", ["a", "n"], [["x:smile:", "1"]], 1, 100))  # an emoji code
@example(("", ["a", "n"], [["12:30:45", "1:2:3"]], 1, 100))  # colons that are no emoji
@example(("", ["a", "n"], [["x ", "1 "], [" ", " 2"]], 1, 100))  # spaces at the ends of cells
@settings(max_examples=300, deadline=None)
def test_render_is_byte_identical_to_rich(case: tuple[str, list[str], list[list[str]], Columns, int]) -> None:
    title, header, rows, left, width = case
    drawn = render(title, header, rows, left, width)
    if drawn is not None:
        assert drawn == rich_output(title, header, rows, left, width)
        styled = render(title, header, rows, left, width, styled=True)
        assert styled is not None and ANSI.sub("", styled) == drawn
        assert f"{BOLD} " in styled or f"{BOLD}{header[0]}" in styled
        assert (ITALIC in styled) == bool(title)


def test_common_tables_take_the_plain_path() -> None:
    rows = [["r01", "capitals", "completed", "24", "2026-11-28 02:30"]]
    header = ["run id", "experiment", "status", "trials", "started"]
    assert render("", header, rows, {0, 1, 2, 4}, 100) is not None
    assert render("capitals: pass_rate", ["run", "started", "n"], [["r1", rows[0][4], "0.5"]], 1, 100)
    assert render("", header, [[*rows[0][:1], "x" * 31, *rows[0][2:]]], {0, 1, 2, 4}, 100) is None  # folds
    assert render("", ["a"], [["é"]], 1, 100) is None  # not ASCII
    assert render("", ["a"], [["[b]x[/b]"]], 1, 100) is None  # markup
    assert not plain_text("done :thumbsup:") and not plain_text(":+1:") and plain_text("at 12:30:45")


class Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


ENVIRONMENTS = [
    {}, {"TERM": "xterm-256color"}, {"TERM": "dumb"}, {"TERM": "UNKNOWN"}, {"FORCE_COLOR": "1"},
    {"FORCE_COLOR": ""}, {"FORCE_COLOR": "1", "TERM": "dumb"}, {"NO_COLOR": "1"}, {"TTY_COMPATIBLE": "0"},
    {"TTY_COMPATIBLE": "1"}, {"TTY_COMPATIBLE": "0", "FORCE_COLOR": "1"}, {"TTY_COMPATIBLE": "2"},
]  # fmt: skip


@pytest.mark.parametrize("tty", [False, True])
@pytest.mark.parametrize("environ", ENVIRONMENTS)
def test_styled_where_rich_styles(environ: dict[str, str], tty: bool) -> None:
    console = Console(file=Stream(tty), _environ=environ, force_jupyter=False, legacy_windows=False)
    console.print("[bold]x[/bold]", end="")
    rich_styles = "\x1b[1m" in console.file.getvalue()  # type: ignore[attr-defined]
    assert styled_output(environ, Stream(tty)) == rich_styles
