"""Where each trial's row is in a run's trial index, in memory for the whole run: small per trial.

A dict of (variant, case, repeat) tuples paid for a tuple, a dict slot and an int per trial, in the
writer of every run, growing with the run. Here a cell (variant x case, numbered by the index's own
numbering) holds its first row as an int while it has only repeat 0, then an array of rows by repeat
(-1: none yet): less per trial the more repeats a cell has (benchmarks/README.md#in-code-memory).
"""

from __future__ import annotations

from array import array

NONE = -1
FAR = 1 << 16  # repeats from here on (only an odd log has them) are kept by (cell, repeat): no huge array


def _far(repeat: int) -> bool:
    """Kept by (cell, repeat): past FAR, or negative (an event from other code; a negative index
    would read and write another repeat's row)."""
    return not 0 <= repeat < FAR


class TrialRows:
    """(cell, repeat) -> row, rows numbered 0, 1, ... in the order trials were first seen."""

    __slots__ = ("_cells", "_far", "count")

    def __init__(self) -> None:
        self._cells: dict[int, int | array[int]] = {}
        self._far: dict[tuple[int, int], int] = {}
        self.count = 0

    def __len__(self) -> int:
        return self.count

    def get(self, cell: int, repeat: int) -> int | None:
        if _far(repeat):
            return self._far.get((cell, repeat))
        found = self._cells.get(cell)
        if found is None:
            return None
        if type(found) is int:
            return found if repeat == 0 else None
        row = found[repeat] if repeat < len(found) else NONE  # type: ignore[index]
        return None if row == NONE else row

    def add(self, cell: int, repeat: int) -> int:
        """The next row, for a trial not in yet."""
        row, self.count = self.count, self.count + 1
        if _far(repeat):
            self._far[(cell, repeat)] = row
            return row
        found = self._cells.get(cell)
        if found is None and repeat == 0:
            self._cells[cell] = row
            return row
        rows = array("q") if found is None else array("q", [found]) if type(found) is int else found
        if len(rows) <= repeat:  # type: ignore[arg-type]
            rows.extend([NONE] * (repeat + 1 - len(rows)))  # type: ignore[union-attr, arg-type]
        rows[repeat] = row  # type: ignore[index]
        self._cells[cell] = rows
        return row


def cell_of(variant: int, case: int) -> int:
    """One int for a cell of the index's numbering (variants fit 16 bits: its columns say so)."""
    return case << 16 | variant
