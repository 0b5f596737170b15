"""Each cell keeps the largest input tokens of its trials (what a budget reserves for its next
trial), completed or failed, through a kept snapshot and its replay alike."""

from __future__ import annotations

from engine.events import kinds as k
from engine.store.kept.snapshots import STATES, load
from engine.store.memory import MemoryStore
from engine.store.projections.run_state import RUN_STATE, RunState
from tests.test_snapshots import rows


def trials() -> list[k.Event]:
    def key(case: str, repeat: int) -> dict[str, object]:
        return {"run_id": "r", "variant": "v", "case": case, "repeat": repeat}

    return [
        k.RunStarted(run_id="r", experiment="e", trials_total=4),
        k.TrialCompleted(**key("c0", 0), output_hash="h", latency_ms=1.0, tokens_in=120),
        k.TrialCompleted(**key("c0", 1), output_hash="h", latency_ms=1.0, tokens_in=90),
        k.TrialFailed(**key("c1", 0), error_kind="infra", message="m", tokens_in=300),
        k.TrialFailed(**key("c1", 1), error_kind="infra", message="m"),
    ]


def test_a_cell_keeps_the_largest_input_of_its_trials() -> None:
    state = RunState("r")
    for seq, event in enumerate(trials(), 1):
        RUN_STATE.evolve(state, event, seq)
    assert state.tokens_in_of(("v", "c0")) == 120
    assert state.tokens_in_of(("v", "c1")) == 300
    assert state.tokens_in_of(("v", "c9")) == 0  # no trial of it yet
    assert state.spend.max_trial_tokens == 300


def test_the_kept_state_and_the_replay_agree_on_it() -> None:
    store = MemoryStore()
    store.append(rows(trials()))
    kept = load(store, STATES, "r")
    replayed = RUN_STATE.load(store, "r", RunState("r"))
    for case, tokens in (("c0", 120), ("c1", 300)):
        assert kept.tokens_in_of(("v", case)) == replayed.tokens_in_of(("v", case)) == tokens
