"""Walk LMDB's B-trees page by page, checking what LMDB itself only asserts (and aborts on).

Every branch page names its children; each child must carry its own page number, be a branch or
a leaf page, and lie inside the file. The main tree's leaves name the roots of the named databases
(`events`, `runs`, `blobs`, `meta`), which are walked the same way. Leaf contents (the events and
blobs) are left to the decoders: damage there is reported when it is read, or by `engine check`.
The layout is LMDB's (mdb.c): 16-byte page headers, then u16 node offsets, 8-byte node headers.
"""

from __future__ import annotations

import mmap
import struct
from typing import BinaryIO

PAGE_HEADER = 16
P_BRANCH, P_LEAF = 0x01, 0x02
F_SUBDATA = 0x02
NO_PAGE = (1 << 64) - 1  # the root of an empty database
MAX_DEPTH = 32  # LMDB's cursor stack: no real tree is deeper
_HEADER = struct.Struct("<QHHHH")  # pgno, pad, flags, lower, upper
_NODE = struct.Struct("<HHHH")  # lo, hi, flags, key size
_DB_ROOT_AT = 40  # md_root inside an MDB_db record


def walk_trees(
    file: BinaryIO, page_size: int, last_page: int, main_root: int, seen: dict[str, list[int]] | None = None
) -> str | None:
    """None when every tree page is sound, else what is wrong with the first bad one.

    `seen`, when given, gets the page numbers of each tree (by database name; "" is the main tree).
    """
    if main_root == NO_PAGE:
        return None
    with mmap.mmap(file.fileno(), (last_page + 1) * page_size, access=mmap.ACCESS_READ) as view:
        walker = _Walker(view, page_size, last_page)
        problem = walker.tree(main_root, "the main tree", subtrees=True, seen=_pages(seen, ""))
        for name, root in walker.named_roots:
            what = f"database {name!r}"
            problem = problem or walker.tree(root, what, subtrees=False, seen=_pages(seen, name))
        return problem


def _pages(seen: dict[str, list[int]] | None, name: str) -> list[int] | None:
    return None if seen is None else seen.setdefault(name, [])


class _Walker:
    def __init__(self, view: mmap.mmap, page_size: int, last_page: int) -> None:
        self.view, self.page_size, self.last_page = view, page_size, last_page
        self.named_roots: list[tuple[str, int]] = []

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
        if flags & P_BRANCH:
            return self.branch(offset, pgno, lower, what, children)
        return self.leaf(offset, pgno, lower) if subtrees else None

    def nodes(self, offset: int, lower: int) -> list[int]:
        count = (lower - PAGE_HEADER) // 2
        pointers = struct.unpack_from(f"<{count}H", self.view, offset + PAGE_HEADER)
        return [offset + p for p in pointers if p + _NODE.size <= self.page_size]

    def branch(self, offset: int, pgno: int, lower: int, what: str, children: list[int]) -> str | None:
        nodes = self.nodes(offset, lower)
        if len(nodes) != (lower - PAGE_HEADER) // 2 or not nodes:
            return f"{what}: branch page {pgno} has a node outside the page"
        for node in nodes:
            lo, hi, flags, _ = _NODE.unpack_from(self.view, node)
            children.append(lo | hi << 16 | flags << 32)
        return None

    def leaf(self, offset: int, pgno: int, lower: int) -> str | None:
        for node in self.nodes(offset, lower):
            _, _, flags, key_size = _NODE.unpack_from(self.view, node)
            if not flags & F_SUBDATA:
                continue
            key_at = node + _NODE.size
            if key_at + key_size + 48 > offset + self.page_size:
                return f"the main tree: leaf page {pgno} has a database record outside the page"
            name = bytes(self.view[key_at : key_at + key_size]).decode("utf-8", "replace")
            root = struct.unpack_from("<Q", self.view, key_at + key_size + _DB_ROOT_AT)[0]
            if root != NO_PAGE:
                self.named_roots.append((name, root))
        return None
