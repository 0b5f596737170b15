"""A label row is checked against the run's outputs gathered once (`RunOutputs`), in constant time:
it finds what a scan of every output finds, for rows that name a trial, and the same error for rows
that do not (a variant, a case or a repeat the run has no output of)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.errors import InputError
from engine.input.labels_file import LabelRow
from engine.runtime.label_record import RunOutputs, check_row

TrialKey = tuple[str, str, int]
variants, cases = st.sampled_from(["a", "b", "c"]), st.sampled_from(["c1", "c2", "c3", "x"])
keys = st.tuples(variants, cases, st.integers(0, 3))


def scanned(outputs: dict[TrialKey, str], row: LabelRow) -> tuple[str, str]:
    """The plain path: what a scan of every output says of the row ("ok" and the output, or the
    field at fault)."""
    if not any(key[0] == row.variant for key in outputs):
        return "variant", ""
    if not any(key[1] == row.case for key in outputs):
        return "case", ""
    for key, output in outputs.items():
        if key == (row.variant, row.case, row.repeat - 1):
            return "ok", output
    return "repeat", ""


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(keys, st.text("0123456789abcdef", min_size=4, max_size=4), min_size=1), keys)
def test_a_row_checked_against_the_gathered_outputs_is_the_scan_s_answer(
    outputs: dict[TrialKey, str], key: TrialKey
) -> None:
    row = LabelRow(variant=key[0], case=key[1], repeat=key[2] + 1, verdict="pass", by="me")
    expected = scanned(outputs, row)
    try:
        event = check_row(RunOutputs.of(outputs), row, "labels.csv:2")
    except InputError as exc:
        assert (exc.file, exc.field) == ("labels.csv:2", expected[0]), exc
        return
    assert expected == ("ok", event.output_hash)
    assert (event.variant, event.case, event.repeat) == key
