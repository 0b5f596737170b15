"""engine's own terminal table (presentation.term_table): what it promises about content, widths and
wrapping, checked on generated tables. No promise to match any other library byte for byte."""

from __future__ import annotations

import re
import string

from hypothesis import example, given, settings
from hypothesis import strategies as st

from engine.presentation.term_table import BOLD, GAP, ITALIC, MIN_TEXT, _wrapped, cell_width, table

ANSI = re.compile(r"\x1b\[[0-9;]*m")
WORD = st.text(st.sampled_from(string.ascii_letters + string.digits + "é日"), min_size=1, max_size=12)
TEXT = st.lists(WORD, min_size=1, max_size=4).map(lambda words: "-".join(words))  # as gpt-4o-mini-v2
FIGURE = st.from_regex(r"[0-9]{1,6}(\.[0-9]{1,3})?", fullmatch=True)
Case = tuple[str, list[str], list[list[str]], int, int]


def words(text: str) -> list[str]:
    return [w for w in re.split(r"(?<=-)", text) if w]


@st.composite
def tables(draw: st.DrawFn) -> Case:
    n = draw(st.integers(1, 6))
    left = draw(st.integers(1, n))  # the label column (0) is text, as in every table engine prints
    cell = [TEXT if i < left else FIGURE for i in range(n)]
    header = [draw(c) for c in cell]
    rows = draw(st.lists(st.tuples(*cell).map(list), max_size=5))
    title = draw(st.text(string.ascii_letters + " ", max_size=60))
    return title, header, rows, left, draw(st.integers(20, 100))


@given(tables())
@example(("", ["variant", "n"], [["gpt-4o-mini-concise-prompt-with-examples", "1"]], 1, 30))
@example(("t", ["name", "n"], [], 1, 100))  # no rows
@example(("a title far longer than the table itself", ["a", "n"], [["x", "1"]], 1, 25))
@settings(max_examples=200, deadline=None)
def test_a_table_fits_where_it_can_and_never_splits_a_label(case: Case) -> None:
    title, header, rows, left, width = case
    lines = table(title, header, rows, left, width).splitlines()
    titled = len(_wrapped(title, width))
    assert len({cell_width(line) for line in lines[titled:]}) == 1  # the table's lines are one width
    cells = [header, *rows]
    figures = sum(max(cell_width(r[i]) for r in cells) for i in range(left, len(header)))
    label = max(cell_width(w) for r in cells for w in words(r[0]))
    if figures + label + MIN_TEXT * (left - 1) + len(GAP) * (len(header) - 1) + 2 <= width:
        assert all(cell_width(line) <= width for line in lines)  # text columns gave way enough
    shown = "".join(lines)
    assert all(word in shown for r in cells for word in words(r[0]))  # a label's words stay whole


@given(TEXT, st.integers(2, 40))  # a column is at least 2 wide: a wide character needs 2
@settings(max_examples=300, deadline=None)
def test_a_cell_wraps_between_words_losing_nothing(text: str, width: int) -> None:
    lines = _wrapped(text, width)
    assert "".join(lines) == text  # nothing dropped, nothing added
    assert all(cell_width(line) <= width for line in lines)
    if all(cell_width(w) <= width for w in words(text)):  # every word fits: lines end between words
        assert all(line.endswith("-") for line in lines[:-1])


def test_a_table_that_fits_is_drawn_whole() -> None:
    rows = [["r01", "capitals", "completed", "24"], ["r02", "capitals", "running", "3"]]
    drawn = table("runs", ["run id", "experiment", "status", "trials"], rows, {0, 1, 2}, 100)
    assert drawn.splitlines() == [
        "runs".ljust(39),
        " " * 39,
        " run id  experiment  status     trials ",
        " " + "─" * 37 + " ",
        " r01     capitals    completed      24 ",
        " r02     capitals    running         3 ",
        " " * 39,
    ]


def test_long_variant_names_wrap_between_words_and_keep_the_label_column() -> None:
    name = "gpt-4o-mini-with-a-rather-long-system-prompt-and-examples"
    rows = [[name, "pass_rate", "0.5", "0.6", "+0.1", "0.03", "higher", "no"]]
    header = ["variant", "metric", "baseline", "candidate", "delta", "p / ratio CI", "direction", "regressed"]
    lines = table("r2 vs r1", header, rows, left=2, width=90).splitlines()
    assert all(len(line) <= 90 for line in lines)
    label = [line[1:].split("  ")[0].strip() for line in lines[4:] if line.strip()]
    assert "".join(label) == name  # the whole name, in the label column, in pieces ending at a "-"
    assert all(piece.endswith("-") for piece in label[:-1])
    assert "pass_rate" in lines[4] and "regressed" in lines[2]  # the other columns whole too


def test_wide_characters_take_two_columns() -> None:
    drawn = table("", ["名前", "n"], [["日本", "1"], ["ab", "22"]], 1, 100)
    assert len({cell_width(line) for line in drawn.splitlines()}) == 1  # aligned on a terminal


def test_styled_is_the_same_text_with_a_bold_header_and_an_italic_title() -> None:
    plain = table("title", ["a", "n"], [["x", "1"]], 1, 100)
    styled = table("title", ["a", "n"], [["x", "1"]], 1, 100, styled=True)
    assert ANSI.sub("", styled) == plain
    assert f"{BOLD}a" in styled and f"{ITALIC}title" in styled


def test_control_characters_in_names_are_not_sent_to_the_terminal() -> None:
    drawn = table("", ["a"], [["evil\x1b[31mred"]], 1, 100)
    assert "\x1b" not in drawn and "evil?[31mred" in drawn
