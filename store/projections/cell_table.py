"""A report state's cells by (variant, case), without a key object per cell.

A dict keyed by `(variant, case)` kept a 2-tuple (64 bytes) and a dict slot (~40 bytes) per cell
beside the cell itself: ~20 MiB at 200,000 cells (benchmarks/README.md, "One report state per live
run"). Here variants and cases are numbered in the order first seen, the cells sit in one list per
variant indexed by the case's number, and an array remembers the order the cells came in: 16 bytes
a cell and a slot per case. It reads as the dict did (`get`, `[]`, `in`, `len`, `items`, `values`,
iteration in insertion order, equality with any mapping), so every reader of `state.cells` is
unchanged; a key tuple is made only when one is asked for. A state folded from events holds a table;
one decoded from a snapshot holds the dict msgspec decodes (the snapshot's bytes are the same either
way: store.kept.streamed packs `items()`), which every reader takes alike. Its views (`keys()`,
`values()`, `items()`) iterate again and again as a dict's do, but are not sets; no `reversed`,
no `|`, no removal: no reader uses them.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator, Mapping
from typing import Any

Key = tuple[str, str]
CASE_BITS = 32


class CellTable:
    __slots__ = ("_variant_no", "_case_no", "_variants", "_cases", "_rows", "_order")

    def __init__(self, cells: Mapping[Key, Any] | None = None) -> None:
        self._variant_no: dict[str, int] = {}
        self._case_no: dict[str, int] = {}
        self._variants: list[str] = []
        self._cases: list[str] = []
        self._rows: list[list[Any]] = []  # per variant: its cells by case number (None: no cell)
        self._order = array("Q")  # variant number << 32 | case number, in the order cells came
        for key, cell in (cells or {}).items():
            self[key] = cell

    def get(self, key: Key, default: Any = None) -> Any:
        try:  # the hot path (a report's lookups, the scheduler's): four subscripts, no test on a hit
            found = self._rows[self._variant_no[key[0]]][self._case_no[key[1]]]
        except (KeyError, IndexError):  # a variant or case never seen, or not in this variant's row
            return default
        return default if found is None else found

    def __getitem__(self, key: Key) -> Any:
        found = self.get(key)
        if found is None:
            raise KeyError(key)
        return found

    def __setitem__(self, key: Key, cell: Any) -> None:
        v = self._number(self._variant_no, self._variants, key[0])
        c = self._number(self._case_no, self._cases, key[1])
        if v == len(self._rows):
            self._rows.append([])
        row = self._rows[v]
        if c >= len(row):
            row.extend([None] * (c + 1 - len(row)))
        if row[c] is None:
            self._order.append(v << CASE_BITS | c)
        row[c] = cell

    def setdefault(self, key: Key, default: Any) -> Any:
        found = self.get(key)
        if found is None:
            self[key] = found = default
        return found

    def __contains__(self, key: object) -> bool:
        return isinstance(key, tuple) and len(key) == 2 and self.get(key) is not None  # type: ignore[arg-type]

    def __len__(self) -> int:
        return len(self._order)

    def __iter__(self) -> Iterator[Key]:
        variants, cases, mask = self._variants, self._cases, (1 << CASE_BITS) - 1
        return ((variants[at >> CASE_BITS], cases[at & mask]) for at in self._order)

    def keys(self) -> View:
        return View(self, CellTable.__iter__)

    def values(self) -> View:
        return View(self, CellTable._values)

    def items(self) -> View:
        return View(self, CellTable._items)

    def _values(self) -> Iterator[Any]:
        rows, mask = self._rows, (1 << CASE_BITS) - 1
        return (rows[at >> CASE_BITS][at & mask] for at in self._order)

    def _items(self) -> Iterator[tuple[Key, Any]]:
        variants, cases, rows, mask = self._variants, self._cases, self._rows, (1 << CASE_BITS) - 1
        for at in self._order:
            v, c = at >> CASE_BITS, at & mask
            yield (variants[v], cases[c]), rows[v][c]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CellTable | dict | Mapping):
            return NotImplemented
        return dict(self.items()) == dict(other.items())

    __hash__ = None  # type: ignore[assignment]  # mutable, as a dict

    def __repr__(self) -> str:
        return f"CellTable({dict(self.items())!r})"

    @staticmethod
    def _number(numbers: dict[str, int], names: list[str], name: str) -> int:
        found = numbers.get(name)
        if found is None:
            found = numbers[name] = len(names)
            names.append(name)
        return found


class View:
    """`keys()`, `values()` or `items()`: iterable again and again, as a dict's views are."""

    __slots__ = ("_table", "_each")

    def __init__(self, table: CellTable, each: Callable[[CellTable], Iterator[Any]]) -> None:
        self._table, self._each = table, each

    def __iter__(self) -> Iterator[Any]:
        return self._each(self._table)

    def __len__(self) -> int:
        return len(self._table)


Mapping.register(CellTable)  # read as the mapping it is (snapshot encoding, equality)
