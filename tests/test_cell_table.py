"""The cell table reads as the dict it replaces: same lookups, same order, same equality."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.store.projections.cell_table import CellTable

keys = st.tuples(st.sampled_from(["a", "b", "c"]), st.sampled_from([f"c{i}" for i in range(6)]))
steps = st.lists(st.tuples(st.sampled_from(["set", "setdefault"]), keys, st.integers(0, 9)), max_size=40)


@settings(max_examples=200, deadline=None)
@given(steps, st.lists(keys, max_size=10))
def test_the_table_reads_as_a_dict(
    ops: list[tuple[str, tuple[str, str], int]], probes: list[tuple[str, str]]
) -> None:
    table, plain = CellTable(), {}
    for op, key, value in ops:
        if op == "set":
            table[key] = plain[key] = value
        else:
            assert table.setdefault(key, value) == plain.setdefault(key, value)
    assert len(table) == len(plain) and list(table) == list(plain)
    assert list(table.items()) == list(plain.items()) and list(table.values()) == list(plain.values())
    assert list(table.keys()) == list(plain.keys()) and list(table.values()) == list(plain.values())  # again
    assert table == plain and table == CellTable(plain) and CellTable(plain) == table
    for key in probes:
        assert (key in table) == (key in plain) and table.get(key) == plain.get(key)
        assert table.get(key, "none") == plain.get(key, "none")
