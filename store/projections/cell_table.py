"""A report state's cells by (variant, case), as columns, without a key object per cell.

A dict keyed by `(variant, case)` kept a 2-tuple (64 bytes) and a dict slot (~40 bytes) per cell
beside the cell itself, and the cell was a 128-byte struct (benchmarks/README.md, "One report state
per live run" and "Live memory, round five"). Here variants and cases are numbered in the order
first seen, each variant's cells are columns by case number (store.projections.cell_columns: a few
bytes a field), and an array remembers the order the cells came in. It reads as the dict did (`get`,
`[]`, `in`, `len`, `items`, `values`, iteration in insertion order, equality with any mapping), so
every reader of `state.cells` is unchanged: a cell read is a view of its row that reads and writes
it as a `Cell`; a key tuple is made only when one is asked for. A state folded from events holds a
table; one decoded from a snapshot holds the dict of `Cell`s msgspec decodes (the snapshot's bytes
are the same either way: store.kept.streamed packs `structs()`), which every reader takes alike. Its
views (`keys()`, `values()`, `items()`) iterate again and again as a dict's do, but are not sets; no
`reversed`, no `|`, no removal: no reader uses them.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from msgspec.structs import astuple

from engine.store.projections.cell import Cell
from engine.store.projections.cell_columns import CellView, VariantColumns

Key = tuple[str, str]
CASE_BITS = 32
RUN = 4096  # cells made into structs at a time by `structs()`


class CellTable:
    __slots__ = ("_variant_no", "_case_no", "_variants", "_cases", "_columns", "_order", "_expected")

    def __init__(self, cells: Mapping[Key, Any] | None = None) -> None:
        self._variant_no: dict[str, int] = {}
        self._case_no: dict[str, int] = {}
        self._variants: list[str] = []
        self._cases: list[str] = []
        self._columns: list[VariantColumns] = []  # per variant: its cells by case number
        self._order = array("Q")  # variant number << 32 | case number, in the order cells came
        self._expected = 0  # cases a variant's columns are made for at once (`expect`)
        for key, cell in (cells or {}).items():
            self[key] = cell

    def expect(self, cases: int) -> None:
        """Each variant's cells will be about `cases` cases (its columns are made that size)."""
        self._expected = cases

    def get(self, key: Key, default: Any = None) -> Any:
        try:  # the hot path (the fold's lookups, a report's): three subscripts, no test on a miss
            columns = self._columns[self._variant_no[key[0]]]
            at = self._case_no[key[1]]
        except (KeyError, IndexError):  # a variant or case never seen
            return default
        present = columns.present
        return CellView(columns, at) if at < len(present) and present[at] else default

    def __getitem__(self, key: Key) -> Any:
        found = self.get(key)
        if found is None:
            raise KeyError(key)
        return found

    def __setitem__(self, key: Key, cell: Cell | CellView) -> None:
        """The cell's values at `key` (copied into the columns: a later change to `cell` is not)."""
        v = self._number(self._variant_no, self._variants, key[0])
        c = self._number(self._case_no, self._cases, key[1])
        if v == len(self._columns):
            self._columns.append(VariantColumns(self._expected))
        columns = self._columns[v]
        if not columns.has(c):
            self._order.append(v << CASE_BITS | c)
        columns.add(c, astuple(cell if isinstance(cell, Cell) else cell.as_struct()))

    def setdefault(self, key: Key, default: Cell) -> Any:
        found = self.get(key)
        if found is None:
            self[key] = default
            found = self.get(key)
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
        columns, mask = self._columns, (1 << CASE_BITS) - 1
        return (CellView(columns[at >> CASE_BITS], at & mask) for at in self._order)

    def _items(self) -> Iterator[tuple[Key, Any]]:
        variants, cases, columns, mask = self._variants, self._cases, self._columns, (1 << CASE_BITS) - 1
        for at in self._order:
            v, c = at >> CASE_BITS, at & mask
            yield (variants[v], cases[c]), CellView(columns[v], c)

    def bit_total(self, combine: Callable[..., int] | None, names: tuple[str, ...]) -> int:
        """Over all cells, the bits set in `combine` of the named masks (the one mask when None),
        read from the columns: a mask is 0 where a variant has no cell of a case, so `combine` must
        give 0 when all its masks are 0."""
        total = 0
        for columns in self._columns:
            masks = [columns.column(name).values for name in names]
            combined = masks[0] if combine is None else map(combine, *masks)
            total += sum(map(int.bit_count, combined))
        return total

    def structs(self) -> Iterator[tuple[Key, Cell]]:
        """`items()` with each cell a `Cell` of its values (what a snapshot encodes), made a few
        thousand at a time, a field at a time: no view and no attribute lookup per cell."""
        variants, cases, mask = self._variants, self._cases, (1 << CASE_BITS) - 1
        for start in range(0, len(self._order), RUN):
            part = self._order[start : start + RUN]
            numbers: dict[int, list[int]] = {}
            for at in part:
                numbers.setdefault(at >> CASE_BITS, []).append(at & mask)
            made = {v: self._columns[v].structs(found) for v, found in numbers.items()}
            for at in part:
                yield (variants[at >> CASE_BITS], cases[at & mask]), next(made[at >> CASE_BITS])

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
