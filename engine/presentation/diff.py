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


def word_diff(base: str, candidate: str) -> WordDiff:
    a, b = _words(base), _words(candidate)
    left: list[Piece] = []
    right: list[Piece] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            left.append(("same", "".join(a[i1:i2])))
            right.append(("same", "".join(b[j1:j2])))
            continue
        if i2 > i1:
            left.append(("del", "".join(a[i1:i2])))
        if j2 > j1:
            right.append(("ins", "".join(b[j1:j2])))
    return WordDiff(left, right)
