"""The compact terminal table of `term_table` drawn without rich, for the common case.

Importing rich (console + table) costs ~40 ms of CPU, a large share of `engine list` and `engine
history`. When every cell is plain (printable ASCII, no markup, no emoji code, text cells no longer
than rich's 30-column fold) and the table fits the width, rich's output is simple enough to write
here: unstyled, `render` returns the very bytes rich prints (tests/test_plain_table.py checks it
against rich with Hypothesis), else None and the caller draws with rich as before.

On a terminal rich styles the header bold and the title italic; so does `render(styled=True)`. The
escape codes differ (rich also bolds the space after each header cell): the text is the same and
looks the same. Cells are not highlighted by either (a table's `highlight` is off in rich).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping

from engine.presentation.term_table import Columns

MAX_TEXT = 30  # term_table's max_width of a text column: longer cells fold in rich
# rich/_emoji_replace.py: `:name:` (or `:name-emoji:`) becomes an emoji when the name is one
_EMOJI = re.compile(r"(:(\S*?)(?:(?:\-)(emoji|text))?:)")
_LETTER = re.compile("[A-Za-z]")
_NAMES_WITHOUT_LETTERS = frozenset({"100", "1234", "+1", "-1", "__1"})  # every other name has a letter
BOLD, ITALIC, RESET = "\x1b[1m", "\x1b[3m", "\x1b[0m"


def plain_text(text: str) -> bool:
    """True when rich prints `text` as it is, one column per character: printable ASCII, no `[`
    (markup), nothing that may be an emoji code (conservative: any `:name:` whose name has a letter)."""
    if not (text.isascii() and text.isprintable()) or "[" in text:
        return False
    return not any(_may_be_emoji(m.group(2)) for m in _EMOJI.finditer(text))


def _may_be_emoji(name: str) -> bool:
    return bool(_LETTER.search(name)) or name in _NAMES_WITHOUT_LETTERS


def render(
    title: str, header: list[str], rows: list[list[str]], left: Columns, width: int, styled: bool = False
) -> str | None:
    """term_table.table(title, header, rows, left) as rich prints it on a console `width` wide, or
    None when rich would do something this does not (fold, wrap, markup, emoji, wide characters)."""
    texts = set(range(left)) if isinstance(left, int) else left
    lines = [header, *rows]
    if not header or any(len(row) != len(header) for row in rows):
        return None
    if not all(plain_text(cell) for row in lines for cell in row) or not plain_text(title):
        return None
    if any(len(row[i]) > MAX_TEXT for row in lines for i in texts if i < len(header)):
        return None
    widths = [max(len(row[i]) for row in lines) for i in range(len(header))]
    widths[-1] = widths[-1] or 1  # rich gives a column at least 1 with its padding: the last has none
    inner = sum(widths) + 2 * (len(widths) - 1)  # collapsed padding: two spaces between columns
    total = inner + 2  # SIMPLE_HEAD's edges are blank columns
    if total > width or len(title) > total:  # rich would shrink the table or wrap the title
        return None

    def cells(row: list[str], style: str = "") -> str:
        drawn = [
            c.ljust(w) if i in texts else c.rstrip().rjust(w)  # rich strips a right-justified cell
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        return " " + "  ".join(_styled(c, style, styled) for c in drawn) + " "

    out = [_styled(title.ljust(total), ITALIC, styled)] if title else []
    out += [" " * total, cells(header, BOLD), " " + "─" * inner + " "]
    out += [cells(row) for row in rows]
    out.append(" " * total)
    return "\n".join(out) + "\n"


def _styled(text: str, style: str, on: bool) -> str:
    return f"{style}{text}{RESET}" if on and style else text


def styled_output(environ: Mapping[str, str] = os.environ, stream: object = None) -> bool:
    """Whether rich's Console would style what it writes to `stream` (stdout by default), following
    its is_terminal and colour-system rules: TTY_COMPATIBLE=0/1 decides, else FORCE_COLOR set (styled
    unless empty), else the stream is a TTY; never on a TERM of "dumb" or "unknown". NO_COLOR removes
    colours only, not bold or italic, so it changes nothing here. Not followed: Jupyter and IDLE
    (rich draws those itself: `plain_stdout` is for a real stdout) and legacy Windows consoles."""
    compatible = environ.get("TTY_COMPATIBLE", "")
    if compatible in ("0", "1"):
        terminal = compatible == "1"
    elif "FORCE_COLOR" in environ:
        terminal = environ["FORCE_COLOR"] != ""
    else:
        terminal = _isatty(sys.stdout if stream is None else stream)
    return terminal and environ.get("TERM", "").lower() not in ("dumb", "unknown")


def _isatty(stream: object) -> bool:
    try:
        return bool(getattr(stream, "isatty", lambda: False)())
    except ValueError:  # a closed stream, as rich allows for
        return False


def plain_stdout(
    title: str, header: list[str], rows: list[list[str]], left: Columns, width: int
) -> str | None:
    """`render` for stdout, styled as rich would style it there; None where rich draws differently
    (a non-UTF encoding makes rich draw the rule in ASCII; Windows consoles have their own boxes)."""
    encoding = (getattr(sys.stdout, "encoding", None) or "utf-8").lower()
    if sys.platform == "win32" or not encoding.startswith("utf"):
        return None
    return render(title, header, rows, left, width, styled_output())
