"""Reading an HDR histogram's recorded values quickly.

hdrh's own iterators run each step in Python and step through every counts slot (tens of
thousands for the latency histogram): three percentiles per variant made a report and each
`engine compare` slower. A plain scan of the counts array is cheap (benchmarks/README.md#in-code-stats).
"""

from __future__ import annotations

import ctypes
from bisect import bisect_left
from itertools import accumulate
from typing import Any

from hdrh.histogram import HdrHistogram


def recorded(hist: HdrHistogram) -> tuple[list[int], list[int]]:
    """(values, counts) of the non-empty buckets, ascending; a value is its bucket's highest
    equivalent, as hdrh reports percentiles (never below any value the bucket holds)."""
    counts = hist.counts
    slots = [i for i in range(hist.counts_len) if counts[i]]
    top = hist.get_highest_equivalent_value
    return [top(hist.get_value_from_index(i)) for i in slots], [counts[i] for i in slots]


def recorded_arrays(hist: HdrHistogram) -> tuple[Any, Any]:
    """recorded(hist) as int64 arrays, the buckets found and valued by numpy: hdrh's
    get_value_from_index and get_highest_equivalent_value on every non-empty slot at once, not one
    call per bucket (benchmarks/README.md#in-code-stats)."""
    import numpy as np

    # the ctypes array's own buffer (np.ctypeslib would import numpy.ma on a first request:
    # benchmarks/README.md#in-code-start-up)
    counts = np.frombuffer(hist.counts, dtype=f"u{ctypes.sizeof(hist.counts._type_)}")[: hist.counts_len]
    slots = np.flatnonzero(counts)
    half_magnitude, half, unit = (
        hist.sub_bucket_half_count_magnitude,
        hist.sub_bucket_half_count,
        hist.unit_magnitude,
    )
    bucket = (slots >> half_magnitude) - 1
    sub = (slots & (half - 1)) + half
    first = bucket < 0  # the first bucket holds the whole sub-bucket range
    sub, bucket = np.where(first, sub - half, sub), np.where(first, 0, bucket)
    lowest = sub << (bucket + unit)
    return lowest + (np.int64(1) << (bucket + unit)) - 1, counts[slots].astype(np.int64)


def nearest_ranks(hist: HdrHistogram, percents: list[int]) -> list[int] | None:
    """The nearest-rank percentiles: the value at rank ceil(percent/100 * n); None when empty."""
    values, counts = recorded(hist)
    n = sum(counts)
    if not n:
        return None
    cumulative = list(accumulate(counts))
    return [values[bisect_left(cumulative, -(-p * n // 100))] for p in percents]  # exact integer ceiling
