"""The storage contract, one suite for every store: the LMDB log and the in-memory store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engine.store.log.reads
from engine.store.contract import EventStore
from engine.store.memory import MemoryStore
from engine.store.open import open_event_log


@pytest.fixture(params=["lmdb", "memory"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[EventStore]:
    made: EventStore = open_event_log(tmp_path / "log") if request.param == "lmdb" else MemoryStore()
    yield made
    made.close()


def rows(run: str, count: int, tag: str = "trial.skipped", start: int = 0) -> list[tuple[str, str, bytes]]:
    return [(run, tag, f"{run}:{start + i}".encode()) for i in range(count)]


def test_swap_is_a_compare_and_set(store: EventStore) -> None:
    assert store.swap("k", None, b"one") is None  # absent, as expected: set
    assert store.swap("k", None, b"two") == b"one"  # not absent: unchanged, the value found returned
    assert store.swap("k", b"one", b"three") == b"one"
    assert store.swap("k", b"three", None) == b"three"  # deleted
    assert store.swap("k", None, b"four") is None


def test_an_empty_store(store: EventStore) -> None:
    assert (store.last_seq(), store.run_ids(), list(store.read()), store.get_blob("k")) == (0, [], [], None)
    assert list(store.read_run("nope")) == [] and store.run_index("nope") == []
    assert store.append([]) == 0 and store.last_seq() == 0
    store.append(rows("a", 2))
    assert store.append([]) == 2 and store.last_seq() == 2  # an empty batch changes nothing


def test_sequence_numbers_are_dense_across_batches(store: EventStore) -> None:
    assert store.append(rows("a", 3)) == 3
    assert store.append(rows("b", 2)) == 5
    assert [seq for seq, _ in store.read()] == [1, 2, 3, 4, 5]
    assert [data for _, data in store.read(2, 4)] == [b"a:1", b"a:2", b"b:0"]
    assert list(store.read(6)) == [] and store.last_seq() == 5


def test_a_runs_events_by_tag_in_log_order(store: EventStore) -> None:
    store.append(rows("a", 2) + rows("b", 1) + rows("a", 1, tag="run.completed", start=2))
    store.append(rows("b", 1, tag="run.completed", start=1) + rows("a", 1, start=3))
    assert [data for _, data in store.read_run("a")] == [b"a:0", b"a:1", b"a:2", b"a:3"]
    assert [data for _, data in store.read_run("a", tags={"run.completed"})] == [b"a:2"]
    skipped, done = "trial.skipped", "run.completed"
    assert store.run_index("a") == [(1, skipped), (2, skipped), (4, done), (6, skipped)]
    assert store.run_index("a", from_seq=3, limit=1) == [(4, "run.completed")]
    assert [seq for seq, _ in store.read_run("b", from_seq=4)] == [5]


def test_runs_are_listed_oldest_first(store: EventStore) -> None:
    store.append(rows("zeta", 1) + rows("alpha", 1))
    store.append(rows("mid", 1) + rows("zeta", 1))
    assert store.run_ids() == ["zeta", "alpha", "mid"]


def test_blobs_commit_with_their_batch_and_the_first_write_wins(store: EventStore) -> None:
    store.append(rows("a", 1), blobs=[("k1", b"first")])
    store.append(rows("a", 1), blobs=[("k1", b"second"), ("k2", b"other")])
    assert (store.get_blob("k1"), store.get_blob("k2")) == (b"first", b"other")


def test_reads_page_through_large_runs(store: EventStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine.store.log.reads, "READ_CHUNK", 4)  # the log reads in chunks: cross their edges
    store.append(rows("a", 9) + rows("b", 9) + rows("a", 3, start=9))
    assert [d for _, d in store.read_run("a")] == [f"a:{i}".encode() for i in range(12)]
    assert len(list(store.read())) == 21 and len(store.run_index("b")) == 9


batches = st.lists(
    st.lists(st.tuples(st.sampled_from(["r1", "r2", "r3"]), st.sampled_from(["x.a", "x.b"])), max_size=6),
    max_size=6,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches)
def test_any_history_reads_back_as_written(store: EventStore, history: list[list[tuple[str, str]]]) -> None:
    """Against a plain list model: whatever was appended is what every read returns."""
    base = store.last_seq()  # hypothesis reuses the fixture's store: continue where it is
    model: list[tuple[str, str, bytes]] = []
    for batch in history:
        written = [(run, tag, f"{base + len(model) + i}".encode()) for i, (run, tag) in enumerate(batch)]
        last = store.append(written)
        model += written
        assert last == base + len(model)
    assert [data for _, data in store.read(base + 1)] == [data for _, _, data in model]
    for run in ("r1", "r2", "r3"):
        mine = [(base + i + 1, tag) for i, (r, tag, _) in enumerate(model) if r == run]
        assert [row for row in store.run_index(run) if row[0] > base] == mine


async def test_a_run_on_the_memory_store_reports_what_it_reports_on_lmdb(tmp_path: Path) -> None:
    import msgspec

    from engine import open_engine, spec_from_dict

    variants = [{"name": name, "params": {"temperature": t}} for name, t in (("cold", 0.0), ("hot", 1.5))]
    cases = [{"id": f"c{i}", "prompt": f"Capital of country {i}?", "expected": "Paris"} for i in range(4)]
    spec = spec_from_dict({"name": "same", "variants": variants, "cases": cases, "repeat": {"count": 2}})
    reports = []
    memory = MemoryStore()
    for store in (tmp_path / "log", memory):
        async with open_engine(store) as eng:
            report = await eng.run(spec, run_id="same")
            timeless = [msgspec.structs.replace(v, latency_ms=None) for v in report.variants]
            reports.append(msgspec.structs.replace(report, variants=timeless))
            assert eng.replay("same") == report  # replay on either store rebuilds the same report
    assert reports[0] == reports[1]
    assert memory.run_ids() == ["same"] and memory.last_seq() > 0
