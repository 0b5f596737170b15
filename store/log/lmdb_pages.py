"""Walk LMDB's B-trees page by page, checking what LMDB itself only asserts (and aborts on).

Every branch page names its children; each child must carry its own page number, be a branch or
a leaf page, and lie inside the file. The main tree's leaves name the roots of the named databases
(`events`, `runs`, `blobs`, `meta`), which are walked the same way. Every node, key and value
must lie inside its page, and a large value's overflow pages inside the file (LMDB would read past
the file's end: SIGBUS). What the values say is left to the decoders and `engine check`.
The layout is LMDB's (mdb.c): 16-byte page headers, then u16 node offsets, 8-byte node headers.
"""

from __future__ import annotations

import mmap
import struct
from typing import BinaryIO

PAGE_HEADER = 16
P_BRANCH, P_LEAF, P_OVERFLOW = 0x01, 0x02, 0x04
F_BIGDATA, F_SUBDATA = 0x01, 0x02
NO_PAGE = (1 << 64) - 1  # the root of an empty database
MAX_DEPTH = 32  # LMDB's cursor stack: no real tree is deeper
BULK_FROM = 2000  # leaf pages from which numpy checks them (its import costs ~0.1 s)
_HEADER = struct.Struct("<QHHHH")  # pgno, pad, flags, lower, upper
_NODE = struct.Struct("<HHHH")  # lo, hi, flags, key size
_DB_ROOT_AT = 40  # md_root inside an MDB_db record


def walk_trees(
    file: BinaryIO,
    page_size: int,
    last_page: int,
    main_root: int,
    seen: dict[str, list[int]] | None = None,
    only: frozenset[str] | None = None,
) -> str | None:
    """None when every tree page is sound, else what is wrong with the first bad one.

    `seen`, when given, gets the page numbers of each tree (by database name; "" is the main tree).
    `only`: the named databases to walk (default: all); the main tree, which names them, always is.
    """
    if main_root == NO_PAGE:
        return None
    with mmap.mmap(file.fileno(), (last_page + 1) * page_size, access=mmap.ACCESS_READ) as view:
        walker = _Walker(view, page_size, last_page)
        problem = walker.tree(main_root, "the main tree", subtrees=True, seen=_pages(seen, ""))
        for name, root in walker.named_roots:
            if only is not None and name not in only:
                continue
            what = f"database {name!r}"
            problem = problem or walker.tree(root, what, subtrees=False, seen=_pages(seen, name))
        return problem or walker.deferred_leaves()


def _pages(seen: dict[str, list[int]] | None, name: str) -> list[int] | None:
    return None if seen is None else seen.setdefault(name, [])


class _Walker:
    def __init__(self, view: mmap.mmap, page_size: int, last_page: int) -> None:
        self.view, self.page_size, self.last_page = view, page_size, last_page
        self.named_roots: list[tuple[str, int]] = []
        # the named databases' leaves (nearly all pages): checked at the end, in bulk when many
        self.leaves: list[tuple[int, int, int]] = []  # (offset, lower, upper)

    def tree(self, root: int, what: str, subtrees: bool, seen: list[int] | None) -> str | None:
        level = [root]
        for _ in range(MAX_DEPTH):
            if seen is not None:
                seen.extend(level)
            children: list[int] = []
            for pgno in level:
                problem = self.page(pgno, what, children, subtrees)
                if problem is not None:
                    return problem
            if not children:
                return None
            level = children
        return f"{what} is deeper than {MAX_DEPTH} levels (a page points back up)"

    def page(self, pgno: int, what: str, children: list[int], subtrees: bool) -> str | None:
        if pgno > self.last_page:
            return f"{what}: page {pgno} is past the last page {self.last_page}"
        offset = pgno * self.page_size
        number, _, flags, lower, upper = _HEADER.unpack_from(self.view, offset)
        if number != pgno or not flags & (P_BRANCH | P_LEAF):
            return f"{what}: page {pgno} is not a tree page (zeroed or overwritten)"
        if not PAGE_HEADER <= lower <= upper <= self.page_size:
            return f"{what}: page {pgno} has a bad layout"
        if not flags & P_BRANCH and not subtrees:
            self.leaves.append((offset, lower, upper))
            return None
        pointers = struct.unpack_from(f"<{(lower - PAGE_HEADER) // 2}H", self.view, offset + PAGE_HEADER)
        if flags & P_BRANCH:
            problem = self.branch(offset, pointers, upper, children)
        else:
            problem = self.leaf(offset, pointers, upper, subtrees)
        return None if problem is None else f"{what}: page {pgno}: {problem}"

    def deferred_leaves(self) -> str | None:
        if len(self.leaves) >= BULK_FROM:
            from engine.store.log.leaves import check_leaves  # numpy: worth its import for big stores only

            self.leaves = check_leaves(self.view, self.page_size, self.leaves)  # then in detail
        for offset, lower, upper in self.leaves:
            count = (lower - PAGE_HEADER) // 2
            pointers = struct.unpack_from(f"<{count}H", self.view, offset + PAGE_HEADER)
            problem = self.leaf(offset, pointers, upper, subtrees=False)
            if problem is not None:
                return f"a database: page {offset // self.page_size}: {problem}"
        return None

    def branch(self, offset: int, pointers: tuple[int, ...], upper: int, children: list[int]) -> str | None:
        if not pointers:
            return "an empty branch page"
        view, end, unpack = self.view, self.page_size, _NODE.unpack_from
        for p in pointers:
            if p < upper or p > end - _NODE.size:
                return "a node outside the page"
            lo, hi, flags, key_size = unpack(view, offset + p)
            if p + _NODE.size + key_size > end:
                return "a key past the page end"
            children.append(lo | hi << 16 | flags << 32)
        return None

    def leaf(self, offset: int, pointers: tuple[int, ...], upper: int, subtrees: bool) -> str | None:
        """Each record lies inside the page, a large value in overflow pages inside the file."""
        view, end, unpack = self.view, self.page_size, _NODE.unpack_from
        for p in pointers:  # (the hot loop of every open: one unpack and two comparisons a record)
            if p < upper or p > end - _NODE.size:
                return "a node outside the page"
            lo, hi, flags, key_size = unpack(view, offset + p)
            data_at = p + _NODE.size + key_size
            if flags:
                problem = self.special(
                    offset + data_at, offset + end, lo | hi << 16, flags, key_size, subtrees
                )
                if problem is not None:
                    return problem
            elif data_at + lo + (hi << 16) > end:
                return "a value past the page end"
        return None

    def special(
        self, data_at: int, end: int, size: int, flags: int, key_size: int, subtrees: bool
    ) -> str | None:
        if flags & F_BIGDATA:
            return self.overflow(data_at, end, size)
        if flags & F_SUBDATA and subtrees:
            return self.subtree(data_at, end, key_size)
        return f"a record with flags {flags:#x}"  # engine keeps no duplicates or nested databases

    def overflow(self, data_at: int, end: int, size: int) -> str | None:
        if data_at + 8 > end:
            return "an overflow pointer past the page end"
        first = struct.unpack_from("<Q", self.view, data_at)[0]
        last = first + (size + PAGE_HEADER - 1) // self.page_size
        if first < 2 or last > self.last_page:
            return f"a value in pages {first}-{last}, past the last page {self.last_page}"
        number, _, flags, _, _ = _HEADER.unpack_from(self.view, first * self.page_size)
        return None if number == first and flags & P_OVERFLOW else f"overflow page {first} is overwritten"

    def subtree(self, data_at: int, end: int, key_size: int) -> str | None:
        if data_at + 48 > end:
            return "a database record past the page end"
        name = bytes(self.view[data_at - key_size : data_at]).decode("utf-8", "replace")
        root = struct.unpack_from("<Q", self.view, data_at + _DB_ROOT_AT)[0]
        if root != NO_PAGE:
            self.named_roots.append((name, root))
        return None
