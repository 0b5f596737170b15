"""A live run's report state is held by its process and saved from there: the store folds no copy of
its own, and what it stores is what a replay of the log folds, also when an event reaches the run
from outside its pipeline (a cancel)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import engine.store.kept.snapshots as snapshots
from engine.events import kinds as k
from engine.store.contract import EncodedRows
from engine.store.kept.snapshots import STATES, rebuild, state_items
from engine.store.memory import MemoryStore
from engine.store.open import open_event_log
from engine.store.projections.run_state import RUN_STATE, RunState
from engine.store.writes import event_rows
from tests.test_snapshots import assert_snapshots_equal_replay, replayed

SPEC = {
    "name": "held", "seed": 5,
    "target": {"kind": "python", "callable": "answer"},
    "variants": [{"name": "a"}, {"name": "b"}],
    "cases": [{"id": f"c{i}", "prompt": f"p{i}", "expected": "yes"} for i in range(30)],
    "graders": [{"kind": "contains"}],
    "repeat": {"count": 2, "early_exit": False},
}  # fmt: skip


def keeper_of(log: Any) -> snapshots.Keeper:
    (keeper,) = log._keepers
    return keeper


async def run_spec(store: Path, answer: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[list[int], Any]:
    """The spec run through the engine on a real store, a state save due every 40 events; the seqs of
    the snapshots the run's process offered, and the engine (its log still open)."""
    from engine.api import open_engine, spec_from_dict
    from engine.store.log.writes import LogWrites

    monkeypatch.setitem(snapshots.EVERY, STATES.name, 40)
    offers: list[int] = []
    offer = LogWrites.offer_state

    def counted(self: Any, run_id: str, seq: int, items: Any) -> None:
        offers.append(seq)
        offer(self, run_id, seq, items)

    monkeypatch.setattr(LogWrites, "offer_state", counted)
    async with open_engine(store, callables={"answer": answer}) as eng:
        answer.engine = eng
        await eng.run(spec_from_dict(SPEC), run_id="h")
    return offers, eng


async def test_a_new_runs_state_is_saved_from_its_process_and_reads_as_the_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def answer(request: Any) -> str:
        return "yes"

    offers, eng = await run_spec(tmp_path / "st", answer, monkeypatch)
    # 120 trials, ~360 events, a save due every max(40, 60 cells) events
    assert len(offers) >= 4 and offers == sorted(offers)
    with open_event_log(tmp_path / "st") as log:
        last = log.run_index("h")[-1][0]
        stored = log.get_snapshot(STATES.key("h"))
        assert STATES.decode(stored).seq == last  # the final save, at release
        assert stored == replayed(log, STATES, "h")  # the bytes a fold of the whole log gives
        assert_snapshots_equal_replay(log, "h")
        rebuild(log)
        assert log.get_snapshot(STATES.key("h")) == stored


async def test_a_regrade_holds_the_state_it_loaded_and_stores_the_replays_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engine.events.spec import ContainsGraderSpec
    from engine.runtime.regrade import regrade_run

    def answer(request: Any) -> str:
        return "yes" if request.case.id < "c2" else "no"

    _, eng = await run_spec(tmp_path / "st", answer, monkeypatch)
    async with open_engine_again(tmp_path / "st") as again:
        offers: list[int] = []
        monkeypatch.setattr(type(again.log), "offer_state", lambda self, r, seq, items: offers.append(seq))
        await regrade_run(again.log, "h", [ContainsGraderSpec(value="no")], name="strict")
        keeper = keeper_of(again.log)
        assert not keeper.held.holds("h") and STATES.key("h") not in keeper._cache
    with open_event_log(tmp_path / "st") as log:
        stored = log.get_snapshot(STATES.key("h"))
        assert STATES.decode(stored).seq == log.run_index("h")[-1][0]  # the regrade's release
        assert stored == replayed(log, STATES, "h")
        assert STATES.decode(stored).state.grading == 1


def open_engine_again(store: Path) -> Any:
    from engine.api import open_engine

    return open_engine(store)


async def test_the_store_holds_no_copy_of_a_held_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[bool] = []

    def answer(request: Any) -> str:  # mid-run: the keeper has no state of the run (nor any save due)
        keeper = keeper_of(answer.engine.log)
        seen.append(STATES.key("h") in keeper._cache or not keeper.held.holds("h"))
        return "yes"

    await run_spec(tmp_path / "st", answer, monkeypatch)
    assert len(seen) == 120 and not any(seen)


async def test_a_cancel_from_outside_the_pipeline_ends_the_hold_and_the_store_stays_true(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []

    def answer(request: Any) -> str:
        calls.append(1)
        if len(calls) == 10:  # appended by this process, not through the run's pipeline
            answer.engine.cancel("h", "from the side")
        return "yes"

    _, eng = await run_spec(tmp_path / "st", answer, monkeypatch)
    keeper = keeper_of(eng.log)
    assert not keeper.held.holds("h")
    with open_event_log(tmp_path / "st") as log:
        assert any(tag == "cancel.requested" for _, tag in log.run_index("h"))
        assert_snapshots_equal_replay(log, "h")
        stored = STATES.decode(log.get_snapshot(STATES.key("h")))
        assert stored is not None and stored.state.cancel_requested


def live_rows(events: list[k.Event]) -> EncodedRows:
    rows = event_rows([events])
    rows.live_state = True
    return rows


def test_an_offer_is_put_with_the_next_batch_and_a_foreign_event_drops_the_next() -> None:
    log = MemoryStore()
    state = RunState("r")
    assert log.hold_state("r", 0)
    first = [k.RunStarted(run_id="r", ts=1.0, experiment="e", trials_total=4)]
    seq = log.append(live_rows(first))
    for event in first:
        RUN_STATE.evolve(state, event, seq)
    log.offer_state("r", seq, state_items(state, seq))
    assert log.get_snapshot(STATES.key("r")) is None  # put with the run's next batch, not before
    started = k.TrialStarted(run_id="r", ts=2.0, variant="v", case="c", repeat=0)
    log.append(live_rows([started]))
    assert log.get_snapshot(STATES.key("r")) == state_items(state, seq)[0][1]
    RUN_STATE.evolve(state, started)
    # a cancel appended outside the pipeline: the state never folds it, so the hold ends
    log.append(event_rows([[k.CancelRequested(run_id="r", reason="x")]]))
    log.offer_state("r", seq + 1, state_items(state, seq + 1))
    log.append(live_rows([k.TrialStarted(run_id="r", ts=3.0, variant="v", case="c", repeat=1)]))
    log.release_state("r", state_items(state, seq + 1))
    assert not keeper_of_memory(log).held.holds("r")
    assert_snapshots_equal_replay(log, "r")
    assert STATES.decode(log.get_snapshot(STATES.key("r"))).state.cancel_requested


def keeper_of_memory(log: MemoryStore) -> snapshots.Keeper:
    return log._keeper


def test_an_abandoned_transaction_ends_every_hold() -> None:
    log = MemoryStore()
    log.hold_state("r", 0)
    keeper_of_memory(log).forget()
    assert not keeper_of_memory(log).held.holds("r")


def test_a_hold_on_a_run_with_events_it_never_folded_ends_at_the_first_batch() -> None:
    log = MemoryStore()
    log.append(event_rows([[k.RunStarted(run_id="r", ts=1.0, experiment="e", trials_total=1)]]))
    log.hold_state("r", 0)  # as if new: but the log has the run's start, which no state here folded
    log.append(live_rows([k.TrialStarted(run_id="r", ts=2.0, variant="v", case="c", repeat=0)]))
    assert not keeper_of_memory(log).held.holds("r")
    assert_snapshots_equal_replay(log, "r")


def test_a_second_hold_of_one_run_leaves_the_run_to_the_keeper() -> None:
    log = MemoryStore()
    assert log.hold_state("r", 0)
    assert not log.hold_state("r", 0)  # a second pipeline of the run (or a hold never released)
    assert not keeper_of_memory(log).held.holds("r")
    assert log.hold_state("r", 0)  # the next one, alone, holds it again


async def test_the_live_fold_names_an_unusable_event_by_its_number_as_a_replay_does() -> None:
    import math

    import trio

    from engine.actors.aggregator import aggregator
    from engine.actors.messages import Committed, Feedback, WriteBatch

    committed_send, committed = trio.open_memory_channel[Committed](10)
    feedback_send, _feedback = trio.open_memory_channel[Feedback](math.inf)
    ident = dict(run_id="r", variant="v", case="c", repeat=0)
    started = k.TrialStarted(**ident, ts=1.0)
    poison = k.TrialCompleted(**ident, ts=1.0, output_hash="h", latency_ms=math.nan)  # the fold refuses it
    async with committed_send:
        committed_send.send_nowait(Committed([WriteBatch([started]), WriteBatch([poison])], 12))
    state = RunState("r")
    await aggregator(committed=committed, state=state, feedback=feedback_send, subscribers=[])
    replay = RunState("r")
    for seq, event in ((11, started), (12, poison)):
        RUN_STATE.evolve(replay, event, seq)
    assert state.unusable == replay.unusable and state.unusable[0][0] == 12


async def test_a_resumed_run_holds_its_state_and_stores_the_replays_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engine.api import open_engine, spec_from_dict
    from engine.events.codec import encode
    from engine.events.spec import VariantSpec

    monkeypatch.setitem(snapshots.EVERY, STATES.name, 40)
    before_crash = [  # a run that died before its first trial
        k.ExperimentDefined(run_id="h", ts=1.0, spec=spec_from_dict(SPEC), spec_hash="x"),
        k.VariantProposed(run_id="h", ts=1.0, variant=VariantSpec(name="a"), index=0),
        k.VariantProposed(run_id="h", ts=1.0, variant=VariantSpec(name="b"), index=1),
        k.RunStarted(run_id="h", ts=1.0, experiment="held", trials_total=120),
    ]

    def answer(request: Any) -> str:
        return "yes"

    async with open_engine(tmp_path / "st", callables={"answer": answer}) as eng:
        eng.log.append([(e.run_id, k.TAG_BY_TYPE[type(e)], encode(e)) for e in before_crash])
        report = await eng.run(None, run_id="h", resume=True)
        keeper = keeper_of(eng.log)
        assert STATES.key("h") not in keeper._cache and not keeper.held.holds("h")  # held, then released
    assert report.trials_done == 120
    with open_event_log(tmp_path / "st") as log:
        stored = log.get_snapshot(STATES.key("h"))
        assert STATES.decode(stored).seq == log.run_index("h")[-1][0]
        assert stored == replayed(log, STATES, "h")
