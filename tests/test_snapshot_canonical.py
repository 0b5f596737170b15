"""A kept state's sets encode sorted (the same state, the same bytes, whatever the insertion order),
and only the fields that hold a set are copied to sort them: a run's cells are encoded as they are."""

from __future__ import annotations

from engine.store.kept.codec import _canonical
from engine.store.kept.snapshots import STATES
from engine.store.projections.run_state import Cell, RunState


def state(keys: list[tuple[str, str, int]]) -> RunState:
    s = RunState("r")
    s.cells[("v", "c")] = Cell(completed=1)
    for key in keys:
        s.in_flight.add(key)
    return s


def test_sets_encode_sorted_whatever_their_order() -> None:
    keys = [("v", f"c{i}", i % 3) for i in range(50)]
    assert STATES.encode(1, state(keys)) == STATES.encode(1, state(keys[::-1]))


def test_only_the_fields_that_hold_sets_are_copied() -> None:
    s = state([("v", "b", 0), ("v", "a", 1)])
    canonical = _canonical(s)
    assert canonical.in_flight == [("v", "a", 1), ("v", "b", 0)]
    assert canonical.cells is s.cells and canonical.spend is s.spend


def test_a_struct_kept_as_an_array_has_another_fingerprint_than_as_a_map() -> None:
    """Cells once stored as maps are rebuilt, never read by position: the shape is in the version."""
    import msgspec

    from engine.store.kept.codec import fingerprint

    class Row(msgspec.Struct):
        a: int = 0

    as_map = fingerprint(Row)

    class Row(msgspec.Struct, array_like=True):  # type: ignore[no-redef]
        a: int = 0

    assert fingerprint(Row) != as_map
