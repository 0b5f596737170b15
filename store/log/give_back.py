"""Freed memory given back to the system after a write transaction fails on a full map.

The failed transaction's pages and the keepers' work for the batch are freed in the writer thread's
glibc arena, which keeps them (resident, anonymous) for later allocations that a run of steady
batches never makes: measured at 20,000 cells, each growth of the map left a step that stayed
(free in the arenas: 16 MiB after four growths, against 2 MiB with the map sized up front;
benchmarks/README.md, "Live memory, round three"). A growth happens a few times per run (the map
doubles), so trimming then costs nothing per event. Elsewhere than glibc this does nothing.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable
from functools import cache


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim  # type: ignore[no-any-return]


def give_back_freed() -> bool:
    """Return the arenas' free pages to the system; whether any were."""
    trim = _malloc_trim()
    return bool(trim(0)) if trim is not None else False
