"""A variant's cells as columns: each field of a cell in an array by case number, read and written
through a view.

A cell as a struct is 128 bytes (fourteen 8-byte slots and a header) and a slot in its variant's row:
~27 MiB at 200,000 cells, the largest part of a live run's memory after the plan's cases
(benchmarks/README.md, "Live memory, round five"). Here each field is an array as narrow as its
values: a repeat mask of up to 7 repeats, a first repeat, a flag take a byte each; a score sum or a
cost 8 bytes; an output hash a reference to a string the cells share (recent_hashes). A column widens
itself (1, 2, 4, 8 bytes, then Python ints) the first time a value does not fit, so no mask of any
number of repeats is ever cut. A view (`CellView`) reads and writes one cell's row as a `Cell` would;
`as_struct` gives the `Cell` of the same values (a snapshot encodes those: the same bytes).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from itertools import repeat, starmap
from typing import Any

from engine.store.projections.cell import Cell

FIELDS: tuple[str, ...] = Cell.__struct_fields__
DEFAULTS: tuple[Any, ...] = tuple(getattr(Cell(), name) for name in FIELDS)
TEXT = frozenset({"first_output"})  # kept as references: the strings are shared, not copied
NUMBER = {name: number for number, name in enumerate(FIELDS)}
FLAG = NUMBER["outputs_vary"]  # a byte in its column, a bool in a cell
WIDER = {"b": "h", "h": "i", "i": "q"}  # signed, so that a first repeat's -1 fits every width


class Column:
    """One field of a variant's cells, by case number."""

    __slots__ = ("values", "default")

    def __init__(self, default: Any, text: bool) -> None:
        self.default = default
        self.values: array[int] | list[Any] = [] if text else array("b")

    def grow(self, size: int) -> None:
        self.values.extend(repeat(self.default, size - len(self.values)))

    def append(self, value: Any) -> None:
        try:
            self.values.append(value)
        except (OverflowError, TypeError):
            self._widen(value)
            self.values.append(value)

    def set(self, at: int, value: Any) -> None:
        try:
            self.values[at] = value
        except (OverflowError, TypeError):  # wider than the column holds (or not an int): widen it
            self._widen(value)
            self.values[at] = value

    def _widen(self, value: Any) -> None:
        values = self.values
        code = values.typecode if isinstance(values, array) else ""
        while code in WIDER:
            code = WIDER[code]
            try:
                array(code, [value])
            except (OverflowError, TypeError):
                continue
            self.values = array(code, values)
            return
        self.values = list(values)  # past 64 bits (a mask of more than 63 repeats), or not an int


class VariantColumns:
    """One variant's cells: a column per field, and which case numbers have a cell."""

    __slots__ = ("present", "columns")

    def __init__(self, cases: int = 0) -> None:
        """`cases`: the number of cases expected, their columns made at that size at once (a column
        grown a case at a time is copied as it grows, and the copies leave holes behind)."""
        self.present = bytearray(cases)
        self.columns = [Column(default, name in TEXT) for name, default in zip(FIELDS, DEFAULTS, strict=True)]
        for column in self.columns:
            column.grow(cases)

    def column(self, name: str) -> Column:
        return self.columns[NUMBER[name]]

    def has(self, at: int) -> bool:
        return at < len(self.present) and self.present[at] == 1

    def add(self, at: int, values: tuple[Any, ...]) -> None:
        """A cell of these field values at case number `at`, a cell there from now on."""
        present = self.present
        if at == len(present):  # the cases come in order: the next one, a value appended per column
            present.append(1)
            for column, value in zip(self.columns, values, strict=True):
                column.append(value)
            return
        if at > len(present):
            present.extend(bytes(at - len(present)))
            for column in self.columns:
                column.grow(at)
            self.add(at, values)
            return
        present[at] = 1
        for column, value in zip(self.columns, values, strict=True):
            column.set(at, value)

    def structs(self, numbers: list[int]) -> Iterator[Cell]:
        """The cells at these case numbers, as `Cell`s, a field at a time."""
        fields = [[column.values[at] for at in numbers] for column in self.columns]
        fields[FLAG] = [bool(flag) for flag in fields[FLAG]]  # a byte in its column, a bool in the cell
        return starmap(Cell, zip(*fields, strict=True))



def _typed(row: list[Any]) -> list[Any]:
    row[FLAG] = bool(row[FLAG])  # a byte in its column, a bool in the cell
    return row


class CellView:
    """One cell of a `VariantColumns`: its fields read and written in place, as a `Cell`'s are."""

    __slots__ = ("_columns", "_at")

    def __init__(self, columns: VariantColumns, at: int) -> None:
        self._columns, self._at = columns.columns, at

    def done(self) -> int:
        return self.graded | self.failed | self.skipped

    def scored(self) -> int:
        """Repeats graded with a score: the ones pass rates and verdicts count."""
        return self.graded & ~self.unscored

    def as_struct(self) -> Cell:
        return Cell(*_typed([column.values[self._at] for column in self._columns]))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CellView):
            other = other.as_struct()
        return self.as_struct() == other if isinstance(other, Cell) else NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, as a Cell

    def __repr__(self) -> str:
        return repr(self.as_struct())


def _field(number: int, flag: bool) -> property:
    def read(view: CellView) -> Any:
        value = view._columns[number].values[view._at]
        return bool(value) if flag else value

    def write(view: CellView, value: Any) -> None:
        view._columns[number].set(view._at, value)

    return property(read, write)


for _number, _name in enumerate(FIELDS):  # graded, passed, ...: each a property of the view
    setattr(CellView, _name, _field(_number, _number == FLAG))
