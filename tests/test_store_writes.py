"""Writes outside a run: `append_events` tags each event by its type, on every store, and the
best-variation projection that `engine best` and scheduled tuning both read."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.events import kinds as k
from engine.events.codec import decode
from engine.store.contract import EventStore
from engine.store.memory import MemoryStore
from engine.store.open import open_event_log
from engine.store.projections.best import best_variations
from engine.store.writes import append_events, event_rows


@pytest.fixture(params=["lmdb", "memory"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[EventStore]:
    made: EventStore = open_event_log(tmp_path / "log") if request.param == "lmdb" else MemoryStore()
    yield made
    made.close()


def accepted(run_id: str, parameter: str, value: float, score: float, ts: float) -> k.VariationAccepted:
    return k.VariationAccepted(
        run_id=run_id, ts=ts, variant=f"{parameter}={value}", parameter=parameter, value=value,
        baseline="baseline", baseline_score=0.5, candidate_score=score, delta=score - 0.5,
    )  # fmt: skip


def test_append_events_tags_each_event_by_its_type(store: EventStore) -> None:
    events = [
        k.RunMarked(run_id="a", ts=1.0, mark="green", by="me"),
        k.CancelRequested(run_id="b", ts=2.0, reason="enough"),
        k.RunCancelled(run_id="b", ts=3.0, reason="enough"),
    ]
    assert append_events(store, events, [("blob-key", b"blob")]) == 3
    assert store.run_index("a") == [(1, "run.marked")]
    assert store.run_index("b") == [(2, "cancel.requested"), (3, "run.cancelled")]
    assert [decode(data) for _, data in store.read()] == events
    assert store.get_blob("blob-key") == b"blob"  # in the same batch as the events
    assert append_events(store, []) == 3  # nothing to write: nothing changes
    rows = event_rows([events[:1], [], events[1:]])  # the log writer's group of batches
    assert [(run, tag) for run, tag, _ in rows] == [("a", "run.marked"), ("b", "cancel.requested"),
                                                    ("b", "run.cancelled")]  # fmt: skip


def test_the_best_variation_is_the_highest_score_and_the_later_on_a_tie(store: EventStore) -> None:
    first = [accepted("s1", "temperature", 0.3, 0.8, 1.0), accepted("s1", "top_k", 40, 0.7, 2.0)]
    later = [accepted("s2", "temperature", 0.5, 0.8, 3.0), accepted("s2", "top_k", 10, 0.6, 4.0)]
    append_events(store, first)
    append_events(store, later)
    best = best_variations(store)
    found = [(b.parameter, b.value, b.run_id) for b in best]
    assert found == [("temperature", 0.5, "s2"), ("top_k", 40, "s1")]
    assert best[0].candidate_score == 0.8 and best[0].delta == pytest.approx(0.3)
    # the scheduler asks over one experiment's sessions only
    only_s2 = best_variations(store, ["s2"])
    assert [(b.parameter, b.value) for b in only_s2] == [("temperature", 0.5), ("top_k", 10)]
    assert best_variations(store, []) == []
