"""Cells whose outputs are the same keep one hash string, not one each; the table stays bounded."""

from __future__ import annotations

import pytest

from engine.events import kinds as k
from engine.store.projections import recent_hashes
from engine.store.projections.run_state import RUN_STATE, RunState


def completed(case: str, output_hash: str) -> k.TrialCompleted:
    return k.TrialCompleted(
        run_id="r", ts=1.0, variant="v", case=case, repeat=0, output_hash=output_hash, latency_ms=1.0
    )


def test_equal_outputs_share_one_string_and_the_state_is_unchanged() -> None:
    state = RunState("r")
    hashes = ["".join(["ab", "ab" * 31]) for _ in range(3)]  # equal, three objects
    assert hashes[0] is not hashes[1]
    for i, output_hash in enumerate(hashes):
        RUN_STATE.evolve(state, completed(f"c{i}", output_hash))
    kept = [cell.first_output for cell in state.cells.values()]
    assert kept == hashes and kept[0] is kept[1] is kept[2]


def test_the_table_is_cleared_when_full(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recent_hashes, "RECENT_KEPT", 4)
    monkeypatch.setattr(recent_hashes, "RECENT_HASHES", {})
    for i in range(10):
        assert recent_hashes.shared_hash(f"{i:064x}") == f"{i:064x}"
        assert len(recent_hashes.RECENT_HASHES) <= 4
