"""Text search over a run's kept outputs and grader reasons: which rows of the trial index hold a
case-insensitive substring or match a regular expression, read chunk by chunk from the index's
texts (no blob read per trial). The answer is the one a search of each trial's own text gives: a
substring is found in the chunk's texts joined by a separator it cannot hold, then mapped back to
its row; a regular expression is tried on each text alone (anchors and lookarounds see one text)."""

from __future__ import annotations

import re
from bisect import bisect_right
from itertools import accumulate

from engine.store.trial_index_codec import COMPLETED
from engine.store.trial_index_read import RunIndex

SEP = "\x00"


def search_rows(index: RunIndex, needle: str = "", pattern: re.Pattern[str] | None = None,
                reasons: bool = False) -> set[int]:  # fmt: skip
    """Rows (their place in the index) whose output (a completed trial's) or, with `reasons`, one of
    whose graders' reasons holds `needle` (already lower case: compared with each text lowered) or
    matches `pattern`."""
    hits: set[int] = set()
    hit = (lambda t: pattern.search(t) is not None) if pattern else (lambda t: needle in t.lower())
    for c, cols in enumerate(index.columns):
        texts, base, flags = index.texts(c), c * index.size, cols.flags
        if pattern is None and SEP not in needle:  # the separator is never found inside one text
            found = {i for i in _found(texts.outputs, needle) if flags[i] & COMPLETED}
        else:
            found = {i for i, text in enumerate(texts.outputs) if flags[i] & COMPLETED and hit(text)}
        if reasons:
            found.update(i for i, said in enumerate(texts.reasons) if said and any(map(hit, said)))
        hits.update(base + i for i in found)
    return hits


def _found(texts: list[str], needle: str) -> list[int]:
    """The texts holding `needle`, by one scan of them joined (each lowered on its own)."""
    lowered = [text.lower() for text in texts]
    joined = SEP.join(lowered)
    starts = [0, *accumulate(len(text) + 1 for text in lowered)]
    out, pos = [], joined.find(needle)
    while pos != -1:
        i = bisect_right(starts, pos) - 1
        out.append(i)
        pos = joined.find(needle, starts[i + 1])
    return out
