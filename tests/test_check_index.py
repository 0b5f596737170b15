"""`engine check`'s run index by sequence number (store/log/check_index.py) holds what a dict of
(run, tag) by seq holds: the same rows listed, popped and left over, in and past its slots."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engine.store.log.check_index import RowsBySeq

ROWS = st.lists(
    st.tuples(st.integers(-2, 40), st.sampled_from(["r1", "r2", "é"]), st.sampled_from(["a", "b"]))
)


@given(last=st.integers(0, 30), rows=ROWS, pops=st.lists(st.integers(-2, 40)))
def test_rows_by_seq_hold_what_a_dict_holds(last: int, rows: list, pops: list[int]) -> None:
    index, plain = RowsBySeq(last), {}
    for seq, run, tag in rows:
        assert index.listed(seq) == (plain[seq][0] if seq in plain else None)
        index.add(seq, run, tag)
        plain[seq] = (run, tag)
    for seq in pops:
        assert index.pop(seq) == plain.pop(seq, (None, None))
    assert list(index.remaining()) == [(seq, run, tag) for seq, (run, tag) in sorted(plain.items())]
