"""engine's one terminal table: `engine list`, `history`, `best`, `compare`, `judge-audit` and the
report's sections all print these, as plain text: rich is not imported to draw them (what that saves a
command: benchmarks/README.md#one-parser-one-terminal-table).

Compact: a title line, the header, a rule, the rows; no vertical rules. Text columns (the first
`left`, or those indexes) are left-aligned, figures right-aligned and never wrapped. When the table is
wider than the terminal, the widest text columns wrap at word breaks (space, `-`, `_`, `/`, `.`), so
a variant's name is split between its words, never inside one; the first (label) column keeps at
least its longest word.
"""

from __future__ import annotations

Columns = int | frozenset[int] | set[int]

# a text cell may wrap after these characters: between the words of a name (gpt-4o- / mini), never
# inside an identifier or a number (tool_success_rate, claude-3.5, 0.25)
BREAKS = frozenset(" \t-/,")
GAP = "  "  # between columns; the table's edges are one blank column each
BOLD, ITALIC, RESET = "\x1b[1m", "\x1b[3m", "\x1b[0m"
MIN_TEXT = 8  # narrower than this, a text column would be mostly wrapping


def cell_width(text: str) -> int:
    """Terminal columns: East Asian wide characters take two, combining marks none."""
    if text.isascii():
        return len(text)
    return sum(_char_width(c) for c in text)


def words(text: str) -> list[str]:
    """`text` cut after each break character: "gpt-4o mini" -> ["gpt-", "4o ", "mini"]. (A regular
    expression does the same; compiling it costs more than drawing a table.)"""
    pieces, start = [], 0
    for end, char in enumerate(text, 1):
        if char in BREAKS:
            pieces.append(text[start:end])
            start = end
    if start < len(text):
        pieces.append(text[start:])
    return pieces


def _char_width(char: str) -> int:
    import unicodedata  # only for names beyond ASCII

    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def table(
    title: str, header: list[str], rows: list[list[str]], left: Columns = 1, width: int = 100,
    styled: bool = False,
) -> str:  # fmt: skip
    """The table as text, at most `width` columns wide where its figures allow, ending in a newline;
    `styled`: the header bold and the title italic (ANSI), for a terminal."""
    texts = set(range(left)) if isinstance(left, int) else set(left)
    header, rows = _printable(header), [_printable(row) for row in rows]
    lines = [header, *rows]
    natural = [max(cell_width(row[i]) for row in lines) for i in range(len(header))]
    widths = _fitted(natural, lines, texts, width)
    inner = sum(widths) + len(GAP) * (len(widths) - 1)
    titled = _wrapped(_printable([title])[0], max(width, 1))
    out = [_style(line.ljust(inner + 2), ITALIC, styled) for line in titled]
    out += [" " * (inner + 2), *_row(header, widths, texts, BOLD if styled else "")]
    out.append(" " + "─" * inner + " ")
    for row in rows:
        out += _row(row, widths, texts, "")
    out.append(" " * (inner + 2))
    return "\n".join(out) + "\n"


def _printable(row: list[str]) -> list[str]:
    """User data (names, error messages) may hold control characters: a terminal must not obey them."""
    return [c if c.isprintable() else "".join(x if x.isprintable() else "?" for x in c) for c in row]


def _fitted(natural: list[int], lines: list[list[str]], texts: set[int], width: int) -> list[int]:
    """Column widths: natural when the table fits. Else text columns wrap between words, the widest
    first; only if that is not enough do text columns other than the label split their words, down
    to MIN_TEXT. Figures keep their width: a table of figures wider than the terminal stays wide."""
    widths = list(natural)
    words = {i: _longest_word(lines, i) for i in texts if i < len(widths)}
    excess = sum(widths) + len(GAP) * (len(widths) - 1) + 2 - width
    for floors in (words, {i: min(w, MIN_TEXT) if i else w for i, w in words.items()}):
        while excess > 0:
            shrinkable = [i for i in floors if widths[i] > floors[i]]
            if not shrinkable:
                break
            widest = max(shrinkable, key=lambda i: widths[i])
            widths[widest] -= 1
            excess -= 1
    return widths


def _longest_word(lines: list[list[str]], column: int) -> int:
    return max((cell_width(word) for row in lines for word in words(row[column])), default=1)


def _row(row: list[str], widths: list[int], texts: set[int], style: str) -> list[str]:
    """One table row as one or more lines: each cell wrapped to its column, padded to it."""
    cells = [
        _wrapped(c, w) if i in texts else [c.strip()]
        for i, (c, w) in enumerate(zip(row, widths, strict=True))
    ]
    height = max(1, *(len(c) for c in cells))
    lines = []
    for n in range(height):
        parts = []
        for i, (cell, w) in enumerate(zip(cells, widths, strict=True)):
            text = cell[n] if n < len(cell) else ""
            pad = " " * max(w - cell_width(text), 0)
            parts.append(_style(text + pad if i in texts else pad + text, style, bool(style)))
        lines.append(" " + GAP.join(parts) + " ")
    return lines


def _wrapped(text: str, width: int) -> list[str]:
    """`text` in lines of at most `width` columns, broken after a space or separator; a word longer
    than the width is split (the only way it fits). An empty text is no line."""
    if cell_width(text) <= width:
        return [text] if text else []
    lines: list[str] = []
    line = ""
    for word in words(text):
        if line and cell_width(line + word.rstrip()) > width:
            lines.append(line.rstrip())
            line = ""
        while cell_width(word) > width:  # a word wider than the column: split it
            cut = _fit(word, width - cell_width(line))
            lines.append(line + word[:cut])
            line, word = "", word[cut:]
        line += word
    if line.strip():
        lines.append(line.rstrip())
    return lines


def _fit(word: str, width: int) -> int:
    """How many characters of `word` fit `width` columns (at least one)."""
    used = 0
    for n, char in enumerate(word):
        used += _char_width(char)
        if used > width:
            return max(n, 1)
    return len(word)


def _style(text: str, style: str, on: bool) -> str:
    return f"{style}{text}{RESET}" if on and style else text
