"""Text search over a run's kept outputs and grader reasons: which rows of the trial index hold a
case-insensitive substring or match a regular expression, read chunk by chunk from the index's
texts (no blob read per trial). The answer is the one a search of each trial's own text gives: a
substring is looked for in each row's output as lowered on its own (kept lowered, one string per
chunk), a regular expression is tried on each text alone (anchors and lookarounds see one text)."""

from __future__ import annotations

import operator
import re
from array import array
from bisect import bisect_right
from itertools import compress, repeat

from engine.store.trial_index.codec import COMPLETED, Lowered
from engine.store.trial_index.read import RunIndex
from engine.store.trial_index.regex_literal import required_literal

SEP = "\x00"


def search_rows(index: RunIndex, needle: str = "", pattern: re.Pattern[str] | None = None,
                reasons: bool = False) -> set[int]:  # fmt: skip
    """Rows (their place in the index) whose output (a completed trial's) or, with `reasons`, one of
    whose graders' reasons holds `needle` (already lower case: compared with each text lowered) or
    matches `pattern`."""
    hits: set[int] = set()
    hit = (lambda t: pattern.search(t) is not None) if pattern else (lambda t: needle in t.lower())
    literal = required_literal(pattern) if pattern else None
    for c, cols in enumerate(index.columns):
        base, flags = c * index.size, cols.flags
        if pattern is None and SEP not in needle:  # the separator is never found inside one text
            code = needle.encode("utf-8", "surrogatepass")
            found = {i for i in _found(index.lowered(c), code) if flags[i] & COMPLETED}
        elif pattern is not None:
            found = {i for i in _matched(index, c, pattern, literal) if flags[i] & COMPLETED}
        else:
            outputs = index.texts(c).split()
            found = {i for i, text in enumerate(outputs) if flags[i] & COMPLETED and hit(text)}
        if reasons:
            said = index.texts(c).reasons
            found.update(i for i, texts in said.items() if any(map(hit, texts)))
        hits.update(base + i for i in found)
    return hits


def _matched(index: RunIndex, chunk: int, pattern: re.Pattern[str], literal: bytes | None) -> list[int]:
    """The chunk's rows whose output matches: tried on each output alone, only on those whose lowered
    text holds the run every match holds (when the expression has one)."""
    if literal is None:
        outputs = index.texts(chunk).split()
        return list(compress(range(len(outputs)), map(pattern.search, outputs)))
    rows = _found(index.lowered(chunk), literal)
    if not rows:
        return []
    texts = index.texts(chunk)
    text, at, search = texts.outputs, array("I", texts.starts), pattern.search
    return [i for i in rows if search(text[at[i] : at[i + 1]]) is not None]


def _found(lowered: Lowered, needle: bytes) -> list[int]:
    """The rows whose lowered output holds `needle`. Few: found by scanning the joined texts (in C) and
    mapped to their rows; many: each row tested (its texts split at their NULs, in C)."""
    text, starts = lowered.text, array("I", lowered.starts)
    rows = len(starts) - 1
    if text.count(needle) <= rows // 8:
        out, pos = [], text.find(needle)
        while pos != -1:
            i = bisect_right(starts, pos) - 1
            out.append(i)
            pos = text.find(needle, starts[i + 1])
        return out
    parts = text.split(b"\0")
    if len(parts) != rows:  # an output holds a NUL of its own: cut at the starts
        parts = [text[starts[i] : starts[i + 1] - 1] for i in range(rows)]
    return list(compress(range(rows), map(operator.contains, parts, repeat(needle, rows))))
