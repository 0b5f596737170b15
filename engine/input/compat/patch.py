"""A variant's `patch` file applied to the base skill/system text: a unified diff, or a whole new text."""

from __future__ import annotations

import re

from engine.errors import InputError

_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@")


def is_diff(text: str) -> bool:
    return any(_HUNK.match(line) for line in text.splitlines())


def looks_like_diff(text: str) -> bool:
    """Meant as a diff (file headers or hunk marks), even if its hunks do not parse."""
    lines = text.splitlines()
    pairs = zip(lines, lines[1:], strict=False)
    headers = any(a.startswith("--- ") and b.startswith("+++ ") for a, b in pairs)
    return headers or any(line.startswith("@@") for line in lines)


def apply_patch(base: str, diff: str, file: str, field: str) -> str:
    """The unified diff applied to base; every context and removed line must match (no fuzz)."""
    lines, out, at = base.splitlines(), [], 0
    hunk_lines = diff.splitlines()
    i = 0
    while i < len(hunk_lines):
        match = _HUNK.match(hunk_lines[i])
        i += 1
        if match is None:
            continue  # the ---/+++ header and any preamble
        start = max(int(match.group(1)) - 1, 0)
        if start < at:
            raise InputError(file, field, "expected hunks in order")
        out.extend(lines[at:start])
        at = start
        while i < len(hunk_lines) and not _HUNK.match(hunk_lines[i]):
            line = hunk_lines[i]
            i += 1
            tag, text = line[:1], line[1:]
            if tag == "+":
                out.append(text)
            elif tag in (" ", "-"):
                if at >= len(lines) or lines[at] != text:
                    raise InputError(file, field, f"expected the patch to apply: line {at + 1} differs")
                if tag == " ":
                    out.append(text)
                at += 1
            elif line.startswith("\\"):
                continue  # "\ No newline at end of file"
    out.extend(lines[at:])
    return "\n".join(out) + ("\n" if base.endswith("\n") else "")
