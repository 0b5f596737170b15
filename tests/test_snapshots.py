"""Projection snapshots: a snapshot plus the events after it folds to what a full replay folds, for
every kept projection, whatever the batches, under kill -9 of a real writing process, and a snapshot
of another projection version is rebuilt from the log, never read."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import lmdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine.store.kept.snapshots as snapshots
from engine.events import kinds as k
from engine.events.codec import encode
from engine.events.kinds import TAG_BY_TYPE
from engine.store.contract import EventStore
from engine.store.kept.codec import Snapshotted
from engine.store.kept.snapshots import ALL, RUN_HEADS, STATES, SUMMARIES, load, rebuild
from engine.store.memory import MemoryStore
from engine.store.open import open_event_log
from tests.killed_writers import killed_writers
from tests.test_replay_equivalence import RUN, runs


def rows(events: list[k.Event]) -> list[tuple[str, str, bytes]]:
    return [(e.run_id, TAG_BY_TYPE[type(e)], encode(e)) for e in events]


def replayed(log: EventStore, snap: Snapshotted[Any], run_id: str) -> bytes:
    """The projection folded from the whole log, encoded as a snapshot of the run's last event."""
    state = snap.projection.load(log, run_id, snap.new(run_id))
    return snap.encode(log.run_index(run_id)[-1][0], state)


def assert_snapshots_equal_replay(log: EventStore, run_id: str, context: str = "") -> None:
    last = log.run_index(run_id)[-1][0]
    for snap in ALL:
        stored = snap.decode(log.get_snapshot(snap.key(run_id)))  # type: ignore[attr-defined]
        assert stored is not None and stored.seq <= last, (snap.name, context)
        assert snap.encode(last, load(log, snap, run_id)) == replayed(log, snap, run_id), (snap.name, context)


def append_in_batches(log: EventStore, events: list[k.Event], cuts: list[int]) -> None:
    start = 0
    for cut in [*sorted(set(cuts)), len(events)]:
        if start < cut:
            log.append(rows(events[start:cut]))
            start = cut


@settings(max_examples=40, deadline=None)
@given(runs(), st.lists(st.integers(0, 200), max_size=12), st.integers(1, 9), st.booleans())
def test_snapshot_and_tail_fold_to_the_full_replay_whatever_the_batches(
    pair: tuple[list[k.Event], list[k.Event], int], cuts: list[int], every: int, ended: bool,
) -> None:  # fmt: skip
    _, events, _ = pair  # the interleaved order, some results logged twice
    events = events + [k.ReportWritten(run_id=RUN, report_hash="h" * 64), k.RunMarked(run_id=RUN, mark="red")]
    if not ended:  # a run still going: its report state was last saved some events back
        events = [e for e in events if not isinstance(e, k.RunCompleted | k.ReportWritten)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(snapshots.EVERY, STATES.name, every)
        store = MemoryStore()
        append_in_batches(store, events, cuts)
    assert_snapshots_equal_replay(store, RUN)
    last = store.last_seq()
    # the writer keeps the summary and heads at every batch, the report state at the run's end (the
    # mark logged after it is none of the report state's business: no need to store it again)
    for snap in (SUMMARIES, RUN_HEADS, *([STATES] if ended else [])):
        kept = snap.decode(store.get_snapshot(snap.key(RUN)))
        assert kept is not None and snap.encode(last, kept.state) == replayed(store, snap, RUN), snap.name
    assert rebuild(store) == len(ALL)
    for snap in ALL:  # rebuilt from the log: the same bytes a full replay gives
        assert store.get_snapshot(snap.key(RUN)) == replayed(store, snap, RUN), snap.name


@settings(max_examples=8, deadline=None)
@given(runs(), st.lists(st.integers(0, 200), max_size=8))
def test_the_lmdb_log_keeps_the_same_snapshots_as_the_memory_store(
    pair: tuple[list[k.Event], list[k.Event], int], cuts: list[int]
) -> None:
    events = pair[1]
    memory = MemoryStore()
    append_in_batches(memory, events, cuts)
    with tempfile.TemporaryDirectory() as folder, open_event_log(Path(folder)) as log:
        append_in_batches(log, events, cuts)
        assert_snapshots_equal_replay(log, RUN)
        for snap in ALL:
            assert log.get_snapshot(snap.key(RUN)) == memory.get_snapshot(snap.key(RUN)), snap.name


def started_run(run_id: str, events: int = 0) -> list[k.Event]:
    return [k.RunStarted(run_id=run_id, experiment="e", trials_total=10, pid=1)] + [
        k.TrialSkipped(run_id=run_id, variant="v", case=f"c{i}", repeat=0, reason="x") for i in range(events)
    ]


@pytest.mark.parametrize("store", ["memory", "lmdb"])
def test_a_snapshot_of_another_version_is_rebuilt_never_read(tmp_path: Path, store: str) -> None:
    log: Any = MemoryStore() if store == "memory" else open_event_log(tmp_path / "store")
    with log:
        log.append(rows(started_run("r", 3)))
        # a snapshot the same projection wrote at an older version, claiming what the log does not say
        old = Snapshotted("summary", 0, SUMMARIES.projection, SUMMARIES.kind, SUMMARIES.new)
        lie = SUMMARIES.new("r")
        lie.status, lie.experiment = "completed", "not this one"
        log.put_snapshots([(SUMMARIES.key("r"), old.encode(log.last_seq(), lie))])
        assert SUMMARIES.decode(log.get_snapshot(SUMMARIES.key("r"))) is None
        assert load(log, SUMMARIES, "r").status == "running"  # folded from the log instead
        # the writer's next batch catches it up from the log and stores the current version
        log.append(rows([k.RunCompleted(run_id="r", status="partial")]))
        stored = SUMMARIES.decode(log.get_snapshot(SUMMARIES.key("r")))
        assert stored is not None and (stored.state.status, stored.state.experiment) == ("partial", "e")
        assert stored.seq == log.last_seq()
        assert_snapshots_equal_replay(log, "r")


def test_a_version_counts_the_fields_of_the_state_and_of_what_it_holds() -> None:
    """A state type whose fields change gets another version: its old snapshots are rebuilt."""
    from dataclasses import make_dataclass

    from engine.store.kept.codec import fingerprint

    def outer(*inner_fields: str) -> type:
        inner = make_dataclass("Inner", [(name, int) for name in inner_fields])
        return make_dataclass("Outer", [("inner", dict[str, inner])])  # type: ignore[valid-type]

    assert fingerprint(outer("a")) == fingerprint(outer("a"))
    assert fingerprint(outer("a", "b")) != fingerprint(outer("a"))
    assert STATES.version != SUMMARIES.version and STATES.version.startswith("2.")


WRITER = """
import sys
import engine.store.kept.snapshots as snapshots
from engine.events import kinds as k
from engine.events.codec import encode
from engine.events.kinds import TAG_BY_TYPE
from engine.store.blobs import pack_blob
from engine.store.open import open_event_log
key, blob = pack_blob(b"an output")
snapshots.EVERY[snapshots.STATES.name] = int(sys.argv[2])
with open_event_log(sys.argv[1], map_size=1 << 20) as log:
    n = log.last_seq()
    if not n:
        started = k.RunStarted(run_id="w", experiment="e", trials_total=0, pid=1)
        log.append([("w", "run.started", encode(started))], blobs=[(key, blob)])
    while True:
        ident = {"run_id": "w", "variant": f"v{n % 2}", "case": f"c{n % 7}", "repeat": n // 14}
        events = [k.TrialStarted(**ident), k.TrialCompleted(**ident, output_hash=key, latency_ms=n % 50),
                  k.TrialGraded(**ident, score=(n % 3) / 2, passed=n % 3 == 2)]
        if n % 5 == 0:
            events.append(k.RunMarked(run_id="w", mark="green"))
        log.append([(e.run_id, TAG_BY_TYPE[type(e)], encode(e)) for e in events])
        print(n, flush=True)  # after each durable batch: the test kills after a seeded one
        n += 1
"""


def test_kill_9_of_a_writing_process_leaves_snapshots_that_fold_to_the_replay(tmp_path: Path) -> None:
    for context in killed_writers(tmp_path, WRITER, max_every=40, max_batches=120):
        with open_event_log(tmp_path) as log:
            assert_snapshots_equal_replay(log, "w", context)
            summary = SUMMARIES.decode(log.get_snapshot(SUMMARIES.key("w")))
            assert summary is not None and summary.seq == log.last_seq(), context  # kept with every batch
            assert not log.check().problems, context  # snapshots are not damage
    with open_event_log(tmp_path) as log:  # and rebuilt from the log: the bytes folding forward gives
        kept = {snap.name: snap.encode(log.last_seq(), load(log, snap, "w")) for snap in ALL}
        rebuild(log)
        assert {snap.name: log.get_snapshot(snap.key("w")) for snap in ALL} == kept


def test_runs_are_listed_from_the_snapshots_until_a_writer_that_keeps_none_appends(tmp_path: Path) -> None:
    with open_event_log(tmp_path / "store") as log:
        log.append(rows(started_run("b", 2)))
        log.append(rows(started_run("a", 1) + [k.RunCompleted(run_id="b", status="completed")]))
        assert log.listed_runs() == log.run_ids() == ["b", "a"]
        assert log.last_of("b") == log.run_index("b")[-1][0] == log.last_seq()
        assert load(log, SUMMARIES, "b").status == "completed"
    # an engine from before snapshots appends: the snapshots neither list nor know its events
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("engine.store.log.writes.mark_written", lambda txn, db: None)
        patch.setattr(snapshots.Keeper, "advance", lambda self, io, batch, first: None)
        with open_event_log(tmp_path / "store") as log:
            log.append(rows([k.RunCompleted(run_id="a", status="failed"), *started_run("c")]))
    with open_event_log(tmp_path / "store", readonly=True) as log:
        assert log.listed_runs() is None and log.last_of("a") is None  # not trusted any more
        assert snapshots.run_ids(log) == ["b", "a", "c"]  # from the log's own index
        assert [load(log, SUMMARIES, r).status for r in ("a", "c")] == ["failed", "running"]
    with open_event_log(tmp_path / "store") as log:
        rebuild(log)  # lists every run again
        assert log.listed_runs() == ["b", "a", "c"]
        assert_snapshots_equal_replay(log, "a")


def test_a_store_from_before_snapshots_reads_as_it_did_and_lists_runs_after_a_rebuild(tmp_path: Path) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("engine.store.log.writes.mark_written", lambda txn, db: None)
        patch.setattr(snapshots.Keeper, "advance", lambda self, io, batch, first: None)
        with open_event_log(tmp_path / "store") as log:
            log.append(rows(started_run("old", 3)))
    env = lmdb.open(str(tmp_path / "store"), max_dbs=8)
    with env.begin(write=True) as txn:  # as an engine from before snapshots left it: no such database
        txn.drop(env.open_db(b"snapshots", txn=txn), delete=True)
    env.close()
    with open_event_log(tmp_path / "store", readonly=True) as log:
        assert log.listed_runs() is None and snapshots.run_ids(log) == ["old"]
        assert load(log, SUMMARIES, "old").status == "running"
    with open_event_log(tmp_path / "store") as log:
        log.append(rows(started_run("new", 1)))
        assert log.listed_runs() is None  # the old run is not listed: the index is read
        assert snapshots.run_ids(log) == ["old", "new"]
        assert load(log, SUMMARIES, "old").status == "running"
        assert_snapshots_equal_replay(log, "new")
        rebuild(log)
        assert log.listed_runs() == ["old", "new"]
        assert_snapshots_equal_replay(log, "old")


@settings(max_examples=30, deadline=None)
@given(runs(), st.lists(st.integers(0, 200), max_size=6), st.booleans())
def test_the_run_page_progress_from_snapshots_is_the_progress_from_every_trial(
    pair: tuple[list[k.Event], list[k.Event], int], cuts: list[int], ended: bool
) -> None:
    from engine.web.data import RunViews
    from engine.web.progress import kept_progress, progress

    events = pair[1] if ended else [e for e in pair[1] if not isinstance(e, k.RunCompleted)]
    failures = [  # errors of several classes, so their order shows
        k.TrialFailed(
            run_id=RUN,
            variant="v0",
            case="c0",
            repeat=9 + r,
            error_kind="infra",
            error_class=kind,
            message="m",
        )
        for r, kind in enumerate(["timeout", "http_429", "timeout", "connect", "http_429"])
    ]
    store = MemoryStore()
    append_in_batches(store, events[:-1] + failures + events[-1:], cuts)
    seq = store.last_seq()
    from_trials = RunViews(store).use(RUN, lambda view: {**progress(view, 1e9), "seq": seq})
    assert kept_progress(store, RUN, seq, 1e9) == from_trials


def assert_kept_is_replay(log: EventStore, run_id: str) -> None:
    """Each kept snapshot, as stored, is the full replay's state (at the run's last event)."""
    last = log.run_index(run_id)[-1][0]
    for snap in ALL:
        kept = snap.decode(log.get_snapshot(snap.key(run_id)))  # type: ignore[attr-defined]
        assert kept is not None and snap.encode(last, kept.state) == replayed(log, snap, run_id), snap.name


async def test_a_run_its_regrade_and_its_bundle_keep_snapshots_the_log_rebuilds_byte_for_byte(
    tmp_path: Path,
) -> None:
    from engine.api import open_engine
    from engine.events.graders import ContainsGraderSpec
    from engine.runtime.regrade import regrade_run
    from tests.test_bundles import answer, round_trip, small_spec

    async with open_engine(tmp_path / "src", callables={"answer": answer}) as eng:
        await eng.run(small_spec(graders=[{"kind": "exact"}]), run_id="r1")
    with open_event_log(tmp_path / "src") as log:
        assert_kept_is_replay(log, "r1")
        await regrade_run(log, "r1", [ContainsGraderSpec(value="y")], name="again")
        assert_kept_is_replay(log, "r1")
    # a bundle carries events and blobs only: the importing store keeps its own snapshots
    for as_id in (None, "r1-copy"):
        dest = round_trip(tmp_path / "src", "r1", tmp_path / str(as_id), as_id)
        with open_event_log(dest) as log:
            assert_kept_is_replay(log, as_id or "r1")
            assert log.listed_runs() == [as_id or "r1"]
            assert not log.check().problems


def test_engine_rebuild_writes_the_bytes_the_writer_kept(tmp_path: Path) -> None:
    from tests.test_store_damage import engine

    store = tmp_path / "st"
    with open_event_log(store) as log:
        log.append(rows(started_run("a", 4)))
        log.append(rows([k.RunCompleted(run_id="a", status="completed"), *started_run("b", 2)]))
        kept = {(s.name, r): log.get_snapshot(s.key(r)) for s in ALL for r in ("a", "b")}
    code, err = engine(store, "rebuild")
    assert code == 0, err
    with open_event_log(store, readonly=True) as log:
        assert {(s.name, r): log.get_snapshot(s.key(r)) for s in ALL for r in ("a", "b")} == kept
        assert log.listed_runs() == ["a", "b"]
    assert engine(store, "check") == (0, "")


def test_masks_past_64_repeats_round_trip_and_both_encodings_agree() -> None:
    import msgspec

    from engine.store.kept import codec as codec

    store = MemoryStore()
    events = [*started_run("r"), *(k.TrialSkipped(run_id="r", variant="v", case="c", repeat=n, reason="x")
                                  for n in (3, 70, 200))]  # fmt: skip
    store.append(rows(events))
    state = load(store, STATES, "r")
    assert state.cells[("v", "c")].skipped == (1 << 3) | (1 << 70) | (1 << 200)
    data = STATES.encode(9, state)
    stored = STATES.decode(data)
    assert stored is not None and stored.state.cells == state.cells and STATES.encode(9, stored.state) == data
    # without such masks the direct encoding is taken (which path is a function of the state, so the
    # same state always gives the same bytes); the general one reads back as the same state
    small = load(store, SUMMARIES, "r")
    plain = msgspec.to_builtins(codec._canonical(small), builtin_types=(bytes,), enc_hook=codec._enc_hook)
    general = codec.seal(codec.zlib.compress(msgspec.msgpack.encode((SUMMARIES.version, 9, plain)), 1))
    assert SUMMARIES.decode(general) == SUMMARIES.decode(SUMMARIES.encode(9, small)) == (9, small)


def test_a_state_the_keeper_cannot_store_never_fails_an_append(tmp_path: Path) -> None:
    """Keeping snapshots is a shortcut: if it fails, the batch is still committed and readers fold
    the log (the keeper gives up on that run's snapshot in this process, rather than retry per batch)."""
    calls = []

    def refuse(self: Any, seq: int, state: Any) -> bytes:
        calls.append(seq)
        raise TypeError("cannot store")

    with pytest.MonkeyPatch.context() as patch, open_event_log(tmp_path / "store") as log:
        patch.setattr(Snapshotted, "encode", refuse)
        for i in range(3):
            log.append(
                rows(started_run("r", 1) if i == 0 else [k.RunCompleted(run_id="r", status="partial")])
            )
        assert log.last_seq() == 4 and len(calls) == len(ALL)  # one try per snapshot, then none
        assert all(log.get_snapshot(snap.key("r")) is None for snap in ALL)
        assert load(log, SUMMARIES, "r").status == "partial"


def test_a_big_state_is_saved_in_proportion_to_its_cells_and_never_further_behind() -> None:
    """The report state's encode is O(cells): saved every max(STATE_EVERY, cells) events, its cost per
    event stays bounded as a run grows, and a reader's tail is never longer than that either."""
    cells, batches = 40, 200
    store, saved_at = MemoryStore(), []
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(snapshots.EVERY, STATES.name, 5)  # smaller than the cells: their count decides
        store.append(rows(started_run("r")))
        for n in range(batches):
            case, repeat = f"c{n % cells}", n // cells
            skip = k.TrialSkipped(run_id="r", variant="v", case=case, repeat=repeat, reason="x")
            store.append(rows([skip]))
            stored = STATES.decode(store.get_snapshot(STATES.key("r")))
            assert stored is not None
            behind = store.last_seq() - stored.seq
            assert behind < max(5, len(load(store, STATES, "r").cells)), n
            if not saved_at or saved_at[-1] != stored.seq:
                saved_at.append(stored.seq)
    # the first cells-many events: saved every 5 as the state grows; then every `cells` events only
    later = [b - a for a, b in zip(saved_at, saved_at[1:], strict=False) if a > cells + 1]
    assert later and all(gap == cells for gap in later), saved_at
    assert_snapshots_equal_replay(store, "r")


def test_the_kept_status_figures_are_the_state_s_own_and_only_read_while_current() -> None:
    from engine.store.kept.snapshots import STATUS, kept
    from engine.store.projections.status import counts_of

    store = MemoryStore()
    failed = k.TrialFailed(run_id="r", variant="v", case="c0", repeat=1, error_kind="infra",
                           error_class="timeout", message="m")  # fmt: skip
    events = [*started_run("r", 6), failed]
    store.append(rows(events))
    store.append(rows([k.RunCompleted(run_id="r", status="completed")]))  # the end: the state is saved
    store.append(rows([k.RunMarked(run_id="r", mark="green")]))  # none of the state's business
    assert kept(store, STATUS, "r") == counts_of(load(store, STATES, "r"))
    assert kept(store, STATUS, "r").errors == 1 and kept(store, STATUS, "r").trials_done == 7
    rebuilt = store.get_snapshot(STATUS.key("r"))
    rebuild(store)
    status = STATUS.made_from(STATES.source)
    assert status.decode(store.get_snapshot(STATUS.key("r"))).state == status.decode(rebuilt).state
    # a trial logged after the last save of the state: the kept figures are behind, not read (the
    # first batch after a rebuild catches the writer's cache up from the log, and saves it)
    for case in ("c8", "c9"):
        store.append(rows([k.TrialSkipped(run_id="r", variant="v", case=case, repeat=0, reason="x")]))
    assert kept(store, STATUS, "r") is None
    assert counts_of(load(store, STATES, "r")).trials_done == 9


def test_a_batch_retried_after_the_map_grows_is_not_caught_up_from_the_store(tmp_path: Path) -> None:
    """A full map abandons the transaction, grows, and appends the same batch again: the writer's
    cached states already hold it (decoding a big state and folding its tail instead cost seconds
    and its memory again, at each growth of the map)."""
    decoded: list[str] = []
    real = Snapshotted.decode

    def counting(self: Any, data: bytes | None) -> Any:
        decoded.append(self.name)
        return real(self, data)

    with pytest.MonkeyPatch.context() as patch, open_event_log(tmp_path / "st", map_size=64 << 10) as log:
        patch.setattr(Snapshotted, "decode", counting)
        log.append(rows(started_run("r")))
        start = log.map_size()
        for n in range(60):
            log.append(rows([k.TrialSkipped(run_id="r", variant="v", case=f"c{n}-{i}", repeat=0,
                                            reason="x" * 200) for i in range(40)]))  # fmt: skip
        assert log.map_size() >= 4 * start  # it grew, more than once
        assert decoded == []
        assert_snapshots_equal_replay(log, "r")


class PutsKept:
    """The keeper's side of a write transaction, kept in a dict: what a batch put, and nothing of the
    run before it (a new run)."""

    def __init__(self) -> None:
        self.puts: dict[bytes, bytes] = {}

    def get(self, key: bytes) -> bytes | None:
        return self.puts.get(key)

    def put(self, key: bytes, value: bytes) -> None:
        self.puts[key] = value

    def last_before(self, run_id: str, seq: int) -> int:
        return 0

    def events(self, run_id: str, from_seq: int, tags: frozenset[str]) -> Any:
        return iter(())


def test_a_state_saved_in_an_abandoned_transaction_is_saved_again_when_the_batch_is_retried() -> None:
    """The save went with the transaction: the retried batch (a full map grew) must save it again,
    not count it as saved and leave readers a longer tail until the next save."""
    keeper = snapshots.Keeper()
    batch = rows(started_run("r", events=3))
    first = PutsKept()
    keeper.advance(first, batch, 1)  # a new run: its state is saved at once
    assert STATES.key("r") in first.puts
    keeper.forget()  # the transaction is abandoned
    again = PutsKept()
    keeper.advance(again, batch, 1)
    assert again.puts.get(STATES.key("r")) == first.puts[STATES.key("r")]
