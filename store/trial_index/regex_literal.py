"""A run of characters every match of a regular expression holds: a search tries the expression only
on the outputs whose lowered text holds it (found in C over a chunk's kept lowered outputs), so a
selective expression costs a substring scan, not a regex call per trial.

The run is lowered (the kept outputs are `str.lower`ed) and may only hold characters a
case-insensitive match cannot meet in a form that lowers to something else: ASCII other than i, s
and k (`re` also folds them with ı, ſ and the Kelvin sign), and caseless characters (CJK, digits,
punctuation), never the NUL that joins them. Any other character ends the run; when no run of 3
bytes is left, there is no filter.
"""

from __future__ import annotations

import re

SHORTEST = 3  # UTF-8 bytes: a shorter run is in most texts, and filters nothing
FOLDED_WITH_OTHERS = frozenset("iskISK")
SEP = "\x00"  # joins the kept lowered outputs: a run holding it would match across two of them


def required_literal(pattern: re.Pattern[str]) -> bytes | None:
    """The longest run of safe characters the expression's top level matches in sequence, lowered and
    UTF-8; None when it has none (alternatives at the top, groups, classes only) or `re` changed."""
    items = _top_level(pattern)
    if items is None:
        return None
    best = run = ""
    for op, value in items:
        char = chr(value) if op == "LITERAL" else ""
        if char and _safe(char):
            run += char.lower()
            best = max(best, run, key=len)
        else:
            run = ""
    found = best.encode("utf-8", "surrogatepass")
    return found if len(found) >= SHORTEST else None


def _top_level(pattern: re.Pattern[str]) -> list[tuple[str, int]] | None:
    """The parsed expression's top-level items (name of the op, its value), each one required in turn.
    `re`'s parser is private: any surprise means no filter, never a wrong one."""
    try:
        from re import _parser  # type: ignore[attr-defined]

        parsed = _parser.parse(pattern.pattern, pattern.flags)
        return [(str(op), value if isinstance(value, int) else -1) for op, value in parsed]
    except Exception:  # noqa: BLE001 - a filter is an optimisation: without it every text is tried
        return None


def _safe(char: str) -> bool:
    if char.isascii():
        return char not in FOLDED_WITH_OTHERS and char != SEP
    return char.lower() == char == char.upper() and char.casefold() == char
