"""glibc's allocator, set for a long run: a run's writer thread folds events into a report state and
encodes multi-MB snapshots of it, and glibc's defaults keep what it frees.

Two defaults grow a long run's memory without bound in sight: every thread that allocates may get
an arena of its own (up to 8 per CPU), each keeping the high-water mark of what was freed in it, and
the size above which a buffer is mapped (and given back when freed) rises to the largest buffer
freed so far, so a snapshot's encode buffer, once freed, makes later ones come from (and stay in) the
arenas. Measured on a run of 100,000 cells: anonymous memory crept with the defaults, and stayed
flat with two arenas and a fixed threshold (benchmarks/README.md#in-code-memory). Elsewhere than glibc (musl,
macOS) this does nothing.
"""

from __future__ import annotations

import ctypes
import sys

M_MMAP_THRESHOLD = -3  # glibc's mallopt parameters (malloc.h)
M_ARENA_MAX = -8
ARENAS = 2
MAP_ABOVE = 1 << 20


def tune_allocator() -> bool:
    """Set the arenas and the mapping threshold (once is enough; again changes nothing); whether it did."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # no mallopt: not glibc
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(M_ARENA_MAX, ARENAS)) and bool(mallopt(M_MMAP_THRESHOLD, MAP_ABOVE))
