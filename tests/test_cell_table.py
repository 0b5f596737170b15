"""The cell table reads and writes as the dict of cells it replaces: same lookups, same order, same
equality, the same values after the same writes (its columns widen as values grow), the same totals
read from its columns as from the cells one by one."""

from __future__ import annotations

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.store.projections.cell import Cell
from engine.store.projections.cell_columns import FIELDS, CellView
from engine.store.projections.cell_table import CellTable
from engine.store.projections.run_state import RunState

TOTALS = ("trials_done", "trials_executed", "trials_errored", "trials_passed", "trials_failed")

keys = st.tuples(st.sampled_from(["a", "b", "c"]), st.sampled_from([f"c{i}" for i in range(6)]))
ints = st.one_of(st.integers(-1, 300), st.integers(0, 1 << 70), st.integers(-(1 << 40), 1 << 40))
VALUES = {
    "first_output": st.sampled_from(["", "h1", "h2"]),
    "outputs_vary": st.booleans(),
    "first_repeat": st.integers(-1, 20_000),
}
writes = st.sampled_from(FIELDS).flatmap(lambda name: st.tuples(st.just(name), VALUES.get(name, ints)))
cells = st.builds(lambda pairs: Cell(**dict(pairs)), st.lists(writes, max_size=5))
steps = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(["set", "setdefault"]), keys, cells),
        st.tuples(st.just("write"), keys, writes),
    ),
    max_size=40,
)


def _apply(table: CellTable, plain: dict, op: str, key: tuple[str, str], arg: object) -> None:
    if op == "set":
        table[key], plain[key] = arg, msgspec.structs.replace(arg)  # type: ignore[type-var]
    elif op == "setdefault":
        assert table.setdefault(key, arg) == plain.setdefault(key, msgspec.structs.replace(arg))  # type: ignore[type-var]
    elif key in plain:  # a write through what a lookup gave: the fold's way
        name, value = arg  # type: ignore[misc]
        setattr(table[key], name, value)
        setattr(plain[key], name, value)
        assert getattr(table[key], name) == getattr(plain[key], name)


@settings(max_examples=300, deadline=None)
@given(steps, st.lists(keys, max_size=10), st.integers(0, 8))
def test_the_table_reads_and_writes_as_a_dict(
    ops: list[tuple[str, tuple[str, str], object]], probes: list[tuple[str, str]], expected: int
) -> None:
    table, plain = CellTable(), {}
    table.expect(expected)  # columns made for that many cases at once: fewer, more or as many
    for op, key, arg in ops:
        _apply(table, plain, op, key, arg)
    assert len(table) == len(plain) and list(table) == list(plain)
    assert list(table.items()) == list(plain.items()) and list(table.values()) == list(plain.values())
    assert list(table.keys()) == list(plain.keys()) and list(table.values()) == list(plain.values())  # again
    assert list(table.structs()) == list(plain.items())
    assert all(type(cell) is Cell for _, cell in table.structs())
    assert table == plain and table == CellTable(plain) and CellTable(plain) == table
    over_table, over_dict = RunState("r", cells=table), RunState("r", cells=plain)  # type: ignore[arg-type]
    assert [getattr(over_table, name)() for name in TOTALS] == [getattr(over_dict, name)() for name in TOTALS]
    for key in probes:
        assert (key in table) == (key in plain) and table.get(key) == plain.get(key)
        assert table.get(key, "none") == plain.get(key, "none")


def test_a_view_reads_its_types_as_a_cell_does() -> None:
    table = CellTable()
    table[("a", "c0")] = Cell(outputs_vary=True, first_output="h", passed=(1 << 80) | 1)
    view = table[("a", "c0")]
    assert isinstance(view, CellView) and view.outputs_vary is True and view.first_output == "h"
    assert view.passed == (1 << 80) | 1 and view.first_repeat == -1 and view.done() == 0
    view.graded = 0b101
    assert table[("a", "c0")].scored() == 0b101 and repr(view) == repr(view.as_struct())
