"""How a report's figures are written for people, on every surface: fixed decimals, "-" for a
figure that does not exist, p-values to three significant digits. Plain text; each surface escapes it.
"""

from __future__ import annotations

from engine.views.p_text import p_value

__all__ = ["P_HOLM", "P_RAW", "fmt", "interval", "money", "p_value", "signed"]


def fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def interval(pair: list[float] | None, digits: int = 2) -> str:
    return "-" if not pair else f"[{pair[0]:.{digits}f}, {pair[1]:.{digits}f}]"


# every p-value shown says whether it is raw or adjusted, and by what: one label for each, everywhere
P_RAW = "p (raw)"
P_HOLM = "p (Holm)"




def money(value: float | None) -> str:
    """Fixed decimals, never an exponent: 0.000037 (a cent is small beside a trial's cost), 3.72."""
    if value is None:
        return "-"
    return f"{value:,.2f}" if abs(value) >= 1 else f"{value:.6f}"


def signed(value: float | None) -> str:
    return "-" if value is None else f"{value:+.3f}"
