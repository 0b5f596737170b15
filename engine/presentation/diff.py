"""A word-level diff of two outputs (base vs candidate), for side-by-side views: each side is a list of
(kind, text) pieces, kind "same", "del" (only in the base) or "ins" (only in the candidate)."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

Piece = tuple[str, str]
MAX_DIFF_CHARS = 20_000  # longer outputs are cut before diffing: the diff is quadratic at worst


@dataclass(frozen=True, slots=True)
class WordDiff:
    base: list[Piece]
    candidate: list[Piece]

    @property
    def changed(self) -> bool:
        return any(kind != "same" for kind, _ in self.base + self.candidate)


def _words(text: str) -> list[str]:
    """Words with the spaces after them, so joining the pieces gives the text back."""
    return re.findall(r"\S+\s*|\s+", text[:MAX_DIFF_CHARS])


def word_ops(base: str, candidate: str) -> list[Piece]:
    """One sequence of pieces: "same" text once, then what only the base has ("del") and what only the
    candidate has ("ins"). The base is same+del, the candidate same+ins (half a WordDiff's size)."""
    a, b = _words(base), _words(candidate)
    ops: list[Piece] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            ops.append(("same", "".join(a[i1:i2])))
            continue
        if i2 > i1:
            ops.append(("del", "".join(a[i1:i2])))
        if j2 > j1:
            ops.append(("ins", "".join(b[j1:j2])))
    return ops


def word_diff(base: str, candidate: str) -> WordDiff:
    ops = word_ops(base, candidate)
    return WordDiff([p for p in ops if p[0] != "ins"], [p for p in ops if p[0] != "del"])
