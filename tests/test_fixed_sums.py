"""A cell's score sum is the same number whether or not it is the shared object of a whole sum."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engine.store.projections.run_state import SCALE, fixed_sum, to_fixed


@given(st.integers(-(10**12), 10**12) | st.integers(0, 70).map(lambda n: n * SCALE))
def test_a_sum_keeps_its_value(total: int) -> None:
    assert fixed_sum(total) == total


def test_passes_summed_in_two_cells_are_one_object() -> None:
    one = to_fixed(1.0)
    first, second = one, one
    for _ in range(4):
        first, second = fixed_sum(first + one), fixed_sum(second + to_fixed(1.0))
    assert first == 5 * SCALE and first is second
