"""The trial index's row map: every (cell, repeat) keeps the row it was given, whatever the order."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from engine.store.trial_index.row_positions import FAR, TrialRows, cell_of

REPEATS = st.one_of(st.integers(0, 9), st.just(FAR + 1), st.integers(-3, -1))
TRIALS = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 5), REPEATS), max_size=60)


@settings(deadline=None)  # no timing here: a loaded machine must not fail it
@given(TRIALS)
@example([(0, 0, 3), (0, 0, 0), (0, 0, 1)])  # a cell whose first trial is not repeat 0
@example([(0, 0, 0), (0, 0, FAR + 1), (1, 0, 0)])  # a far repeat beside repeat 0
@example([(0, 0, 0), (0, 0, 1), (0, 0, -1), (0, 0, 2)])  # a negative repeat (another program's event)
def test_rows_are_a_dict_of_trials(trials: list[tuple[int, int, int]]) -> None:
    rows, expected = TrialRows(), {}
    for variant, case, repeat in trials:
        cell = cell_of(variant, case)
        found = rows.get(cell, repeat)
        assert found == expected.get((cell, repeat))
        if found is None:
            expected[(cell, repeat)] = rows.add(cell, repeat)
    assert len(rows) == len(expected)
    assert sorted(expected.values()) == list(range(len(expected)))
    assert all(rows.get(cell, repeat) == row for (cell, repeat), row in expected.items())
    assert rows.get(cell_of(9, 9), 0) is None and rows.get(cell_of(0, 0), 10) is None
