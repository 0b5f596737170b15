"""Prose the CLI prints (warnings, notes) folded to 100 columns: continuation lines indented, and a
path or other long token kept whole on a line of its own, so it can still be copied."""

from __future__ import annotations

import textwrap

WIDTH = 100


def fold(text: str, width: int = WIDTH) -> str:
    if len(text) <= width:
        return text
    return "\n".join(
        textwrap.wrap(
            text, width, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False
        )
    )
