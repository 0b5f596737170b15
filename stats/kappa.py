"""Cohen's kappa of a judge against people, from the 2x2 confusion table, with a 95% interval.

The interval is kappa +- 1.96 SE with the large-sample standard error
SE = sqrt(po (1 - po) / (n (1 - pe)^2)) (Cohen 1960), clipped to [-1, 1]. It needs no resampling, so
it is deterministic and costs nothing for any number of labels.
"""

from __future__ import annotations

import math
from typing import NamedTuple

Z95 = 1.959963984540054
METHOD = "Cohen's kappa, 95% interval kappa +- 1.96 SE, SE = sqrt(po(1-po) / (n (1-pe)^2)) (Cohen 1960)"
TARGET_WIDTH = 0.3
MIN_LABELS = 10  # fewer labels than this: the interval is too rough to trust whatever its width


class Kappa(NamedTuple):
    agreement: float | None
    kappa: float | None
    low: float | None
    high: float | None
    needs_more: int


def _chance(tp: int, fp: int, fn: int, tn: int) -> float:
    n = tp + fp + fn + tn
    judge_pass, people_pass = (tp + fp) / n, (tp + fn) / n
    return judge_pass * people_pass + (1 - judge_pass) * (1 - people_pass)


def cohen_kappa(tp: int, fp: int, fn: int, tn: int, width: float = TARGET_WIDTH) -> Kappa:
    """Agreement, kappa and its interval; `needs_more` labels for an interval `width` wide."""
    n = tp + fp + fn + tn
    if n == 0:
        return Kappa(None, None, None, None, labels_needed(0, 0.5, 0.5, width))
    po, pe = (tp + tn) / n, _chance(tp, fp, fn, tn)
    more = labels_needed(n, po, pe, width)
    if pe >= 1.0:  # both gave one verdict only: kappa is undefined
        return Kappa(po, None, None, None, more)
    kappa = (po - pe) / (1 - pe)
    half = Z95 * math.sqrt(po * (1 - po) / n) / (1 - pe)
    return Kappa(po, kappa, max(-1.0, kappa - half), min(1.0, kappa + half), more)


def labels_needed(n: int, po: float, pe: float, width: float) -> int:
    """More labels for an interval `width` wide. The SE shrinks as 1/sqrt(n); the planning values are
    the observed ones kept off the edges (a perfect run of 5 labels still needs more than 0)."""
    po, pe = min(max(po, 0.5), 0.95), min(pe, 0.9)
    needed = math.ceil((2 * Z95) ** 2 * po * (1 - po) / ((1 - pe) ** 2 * width**2))
    return max(MIN_LABELS, needed) - n if max(MIN_LABELS, needed) > n else 0
