"""Where each trial's row is in a run's trial index, in memory for the whole run: 4 bytes per trial.

A dict of (variant, case, repeat) tuples paid for a tuple, a dict slot and an int per trial, and a
dict of cells (an int key, then an array object by repeat) still ~100-200 bytes a cell. The index
numbers its variants and cases densely (0, 1, ... in the order first seen), so the rows are columns
instead: one array of rows per (variant, repeat), indexed by case (-1: none yet). A run of 200,000
cells x 5 repeats keeps 4 MB here, not ~40 MB (benchmarks/README.md, "Live memory, round three"):
a row number is 4 bytes (a run's trial index past 2**31 rows would fail loudly, not wrap).
"""

from __future__ import annotations

from array import array

NONE = -1
ROW = "i"  # 4-byte signed rows: half of 8-byte ones, 4 MB at a million trials
FAR = 1 << 16  # repeats from here on (only an odd log has them) are kept by (cell, repeat): no huge array
VARIANT_BITS = 16


def _far(repeat: int) -> bool:
    """Kept by (cell, repeat): past FAR, or negative (an event from other code; a negative index
    would read and write another repeat's row)."""
    return not 0 <= repeat < FAR


class TrialRows:
    """(cell, repeat) -> row, rows numbered 0, 1, ... in the order trials were first seen."""

    __slots__ = ("_columns", "_far", "count")

    def __init__(self) -> None:
        self._columns: list[list[array[int]]] = []  # [variant][repeat][case] -> row or NONE
        self._far: dict[tuple[int, int], int] = {}
        self.count = 0

    def __len__(self) -> int:
        return self.count

    def get(self, cell: int, repeat: int) -> int | None:
        if _far(repeat):
            return self._far.get((cell, repeat))
        variant, case = cell & (1 << VARIANT_BITS) - 1, cell >> VARIANT_BITS
        if variant >= len(self._columns) or repeat >= len(by_repeat := self._columns[variant]):
            return None
        column = by_repeat[repeat]
        row = column[case] if case < len(column) else NONE
        return None if row == NONE else row

    def add(self, cell: int, repeat: int) -> int:
        """The next row, for a trial not in yet."""
        row, self.count = self.count, self.count + 1
        if _far(repeat):
            self._far[(cell, repeat)] = row
            return row
        variant, case = cell & (1 << VARIANT_BITS) - 1, cell >> VARIANT_BITS
        while len(self._columns) <= variant:
            self._columns.append([])
        by_repeat = self._columns[variant]
        while len(by_repeat) <= repeat:
            by_repeat.append(array(ROW))
        column = by_repeat[repeat]
        if len(column) <= case:  # cases come dense and in order: mostly one append
            column.extend([NONE] * (case - len(column)))
            column.append(row)
        else:
            column[case] = row
        return row


def cell_of(variant: int, case: int) -> int:
    """One int for a cell of the index's numbering (variants fit 16 bits: its columns say so)."""
    return case << VARIANT_BITS | variant
