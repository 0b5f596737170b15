"""The records of many leaf pages checked at once with numpy (the hot part of the open-time walk).

Only the common case is decided here: a plain record (flags 0) whose node, key and value lie inside
its page. A page with anything else (a large value in overflow pages, a bad offset) is handed back
for the detailed check in `store.lmdb_pages`; records are gathered across a chunk of pages at a time.
"""

from __future__ import annotations

import mmap

import numpy as np

CHUNK = 2048  # pages per gather: bounded memory however large the store
NODE = 8


Leaf = tuple[int, int, int]  # (offset, lower, upper)


def check_leaves(view: mmap.mmap, page_size: int, leaves: list[Leaf]) -> list[Leaf]:
    """The leaves that are not all plain in-page records (large values, or damage)."""
    buf = np.frombuffer(view, dtype=np.uint8)
    odd: list[Leaf] = []
    try:
        for start in range(0, len(leaves), CHUNK):
            chunk = leaves[start : start + CHUNK]
            rows = _odd_pages(buf, page_size, np.asarray(chunk, dtype=np.int64))
            odd.extend(chunk[int(row)] for row in rows)
    finally:
        del buf  # the map closes after this: no view of it may outlive the call
    return odd


def _u16(buf: np.ndarray, at: np.ndarray) -> np.ndarray:
    return buf[at].astype(np.int64) | buf[at + 1].astype(np.int64) << 8


def _odd_pages(buf: np.ndarray, page_size: int, pages: np.ndarray) -> np.ndarray:
    offsets, lowers, uppers = pages[:, 0], pages[:, 1], pages[:, 2]
    counts = (lowers - 16) // 2
    widest = int(counts.max()) if len(counts) else 0
    if widest == 0:
        return np.empty(0, dtype=np.int64)
    slots = np.arange(widest)
    used = slots[None, :] < counts[:, None]
    rows = np.nonzero(used)[0]
    pointers = _u16(buf, (offsets[:, None] + 16 + 2 * slots[None, :])[used])
    bad = (pointers < uppers[rows]) | (pointers > page_size - NODE)
    nodes = offsets[rows] + np.where(bad, 0, pointers)
    size = _u16(buf, nodes) | _u16(buf, nodes + 2) << 16
    flags, key_size = _u16(buf, nodes + 4), _u16(buf, nodes + 6)
    bad |= flags != 0
    bad |= np.where(bad, 0, pointers) + NODE + key_size + np.where(flags == 0, size, 0) > page_size
    return np.unique(rows[bad])
