"""How a p-value is written for people on every surface (and in the sentences views make, such as
`engine compare`'s regressions): three significant digits, "<0.001" below that, "-" for none."""

from __future__ import annotations


def p_value(value: float | None) -> str:
    """Three significant digits, for people: 0.266, 0.0107, 1.00; below 0.001 only that."""
    if value is None:
        return "-"
    return "<0.001" if value < 0.001 else f"{value:#.3g}"
