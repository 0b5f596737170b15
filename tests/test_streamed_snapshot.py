"""A report state's snapshot packed in pieces is, byte for byte, the snapshot packed whole."""

from __future__ import annotations

from dataclasses import dataclass

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.events import kinds as k
from engine.store.kept.codec import _enc_hook
from engine.store.kept.snapshots import STATES
from engine.store.kept.streamed import map_header, packed_pieces
from engine.store.projections.run_state import RUN_STATE, Cell, RunState
from tests.test_replay_equivalence import RUN, runs

ENCODE = msgspec.msgpack.Encoder(enc_hook=_enc_hook).encode


def folded(events: list[k.Event]) -> RunState:
    state = RunState(RUN)
    for seq, event in enumerate(events, start=1):
        RUN_STATE.evolve(state, event, seq)
    return state


@settings(max_examples=60, deadline=None)
@given(runs(), st.integers(1, 7))
def test_pieces_are_the_whole_encoding_whatever_the_chunk(
    pair: tuple[list[k.Event], list[k.Event], int], chunk: int
) -> None:
    state = folded(pair[1])
    state.in_flight.clear()  # a set: the snapshot codec sorts it first (codec._canonical)
    whole = ENCODE(("v", 7, state))
    assert b"".join(packed_pieces(ENCODE, ("v", 7), state, "cells", chunk)) == whole


@given(st.sampled_from([0, 1, 15, 16, 17, 65535, 65536, 70000]))
@settings(max_examples=8, deadline=None)
def test_a_map_header_is_msgspecs_for_every_size(count: int) -> None:
    cells = {(f"v{i % 3}", f"c{i}"): Cell(graded=i % 4) for i in range(count)}
    packed = ENCODE(cells)
    assert packed.startswith(map_header(count))
    body = b"".join(packed_pieces(ENCODE, (), Holder(cells), "cells", 5000))
    assert body == b"\x91" + map_header(1) + ENCODE("cells") + packed  # [{"cells": {...}}]


@dataclass
class Holder:
    """The smallest dataclass with a streamed field."""

    cells: dict[tuple[str, str], Cell]


def test_a_saved_state_reads_back_the_same() -> None:
    from tests.test_replay_equivalence import trial_events

    events = [e for c in range(300) for e in trial_events("v", f"c{c}", 0, ("graded", 10, 5, 3))]
    state = folded(events)
    stored = STATES.decode(STATES.encode(len(events), state))
    assert stored is not None and stored.seq == len(events)
    assert STATES.encode(len(events), stored.state) == STATES.encode(len(events), state)
    assert stored.state.cells == state.cells
