"""Sequential experiments: looks at the comparisons while repeats are added in rounds.

Each look spends part of alpha (a quadratic spending function: little at the first looks, most at
the last), and a look rejects only below its own share, so however many looks are taken the chance
of a false winner stays at alpha (Bonferroni over the looks; non-binding futility can only lower
it). The same levels decide a tuning session's extra rounds of repeats on a close call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

Stop = Literal["", "efficacy", "futility", "max"]


def look_level(alpha: float, look: int, looks: int) -> float:
    """The significance level of look `look` (1-based) of `looks`; the levels add up to alpha."""
    return alpha * ((look / looks) ** 2 - ((look - 1) / looks) ** 2)


def look_decision(
    comparisons: Sequence[tuple[float | None, float | None]], level: float, look: int, looks: int
) -> Stop:
    """Whether to stop after this look, from each candidate's (Holm-adjusted p, delta) against the
    baseline: "efficacy" once every candidate is clearly better or worse (p below the look's level)
    or, from half the looks on, no better than the baseline ("futility" when none was clear); "max"
    at the last look; "" to go on."""
    if look >= looks:
        return "max"
    clear = [p is not None and p < level for p, _ in comparisons]
    no_better = [2 * look >= looks and (d is None or d <= 0) for _, d in comparisons]
    if not comparisons or not all(c or f for c, f in zip(clear, no_better, strict=True)):
        return ""
    return "efficacy" if any(clear) else "futility"
