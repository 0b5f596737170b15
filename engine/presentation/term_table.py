"""A compact terminal table (rich): `engine list`, `history` and the report's sections print these.

Apart from `presentation.terminal` (the report's sections) so the commands that print a table of
runs import neither the report's model nor rich until they draw.
"""

from __future__ import annotations

from typing import Any

Columns = int | frozenset[int] | set[int]


def table(title: str, header: list[str], rows: list[list[str]], left: Columns = 1) -> Any:
    """A compact table (no vertical rules): text columns (the first `left`, or those indexes) to the
    left, figures to the right, long names folded."""
    from rich import box
    from rich.table import Table

    out = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left", pad_edge=False, collapse_padding=True)
    texts = set(range(left)) if isinstance(left, int) else left
    for i, name in enumerate(header):
        if i in texts:  # only text columns give way when the terminal is narrow: figures never wrap
            out.add_column(name, justify="left", overflow="fold", max_width=30)
        else:
            out.add_column(name, justify="right", no_wrap=True)
    for row in rows:
        out.add_row(*row)
    return out
