"""A big batch is appended in bounded pieces inside its one transaction (store/log/bounded.py): the
store it leaves reads as the same batch appended event by event, each in its own transaction with
the keepers folding it alone, and an imported bundle reports and replays as its source does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.events import kinds as k
from engine.events.codec import encode
from engine.events.kinds import TAG_BY_TYPE
from engine.input.bundle_files import load_bundle
from engine.runtime.bundle_import import import_bundle
from engine.store.kept.snapshots import ALL, load
from engine.store.log import bounded
from engine.store.log.event_log import EventLog
from engine.store.open import open_event_log
from engine.store.trial_index import codec as trial_index_codec
from engine.store.trial_index import index as trial_index
from engine.store.trial_index.read import load_index
from engine.views.current_report import current_report_json as report_json
from engine.views.queries import replay_json
from tests.test_bundles import bundled as bundled  # noqa: F401  # the fixture: a CLI run's bundle
from tests.test_snapshots import assert_snapshots_equal_replay
from tests.test_trial_index import BLOBS, RUN, assert_index_is_the_fold, event_runs, header


def _rows(events: list[k.Event]) -> list[tuple[str, str, bytes]]:
    return [(e.run_id, TAG_BY_TYPE[type(e)], encode(e)) for e in events]


def _log_records(log: EventLog) -> list[list[tuple[bytes, bytes]]]:
    """The log's own trees, byte for byte: events, run index, blobs."""
    trees = (log._events, log._runs, log.blobs_db)  # noqa: SLF001
    with log._env.begin() as txn:  # type: ignore[union-attr]  # noqa: SLF001
        return [[(bytes(key), bytes(value)) for key, value in txn.cursor(db=db)] for db in trees]


def _read_as(log: EventLog) -> tuple[Any, ...]:
    """What readers read: each kept state folded forward, and the trial index's records."""
    states = tuple(snap.encode(0, load(log, snap, RUN)) for snap in ALL)
    index = load_index(log, RUN)
    assert index is not None
    return states, [r for c in range(len(index.columns)) for r in index.records(c)]


@settings(max_examples=30, deadline=None)
@given(event_runs(), st.integers(1, 12), st.booleans())
def test_a_batch_kept_in_pieces_reads_as_the_same_events_appended_one_by_one(
    tmp_path_factory: pytest.TempPathFactory, events: list[k.Event], piece: int, ended: bool
) -> None:
    tail = [k.RunCompleted(run_id=RUN, status="completed")] if ended else []
    rows = _rows(events + tail)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(trial_index_codec, "CHUNK", 3)
        patch.setattr(trial_index, "EVERY", 4)
        patch.setattr(bounded, "PIECE", piece)
        with open_event_log(tmp_path_factory.mktemp("one-by-one")) as plain:
            for row in rows:
                plain.append([row], blobs=BLOBS)
            with open_event_log(tmp_path_factory.mktemp("pieces")) as batched:
                batched.append(rows, blobs=BLOBS)
                assert _log_records(batched) == _log_records(plain)
                assert_snapshots_equal_replay(batched, RUN, f"pieces of {piece}")
                assert_index_is_the_fold(batched, f"pieces of {piece}")
                assert _read_as(batched) == _read_as(plain)


def test_a_bundle_imported_in_pieces_reports_as_one_imported_whole(
    tmp_path: Path, bundled: Path, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
) -> None:  # fmt: skip
    bundle = load_bundle(bundled)
    results = []
    for piece in (len(bundle.events), 5):  # one piece (the plain path), then many
        monkeypatch.setattr(bounded, "PIECE", piece)
        with open_event_log(tmp_path / f"dest-{piece}") as log:
            assert import_bundle(log, bundle, str(bundled)) == ("b1", "imported")
            assert not log.check().problems
            results.append((_log_records(log), report_json(log, "b1", 0), replay_json(log, "b1", 0)))
    assert results[0] == results[1]
    assert results[1][1] == results[1][2]  # the kept report is the replayed one


def test_a_big_batch_grows_the_map_once_before_it_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A map grown while the batch is written would abort it and fold it all again."""
    monkeypatch.setattr(bounded, "PIECE", 10)
    long_case = "c" * 4000  # events bigger than the map: it must grow before the keepers fold them
    events = [k.TrialStarted(run_id=RUN, variant="a", case=long_case, repeat=i, ts=1.0) for i in range(400)]
    with open_event_log(tmp_path / "st", map_size=1 << 20) as log:
        tries = 0
        advance = log._keepers[0].advance  # noqa: SLF001

        def counted(io: Any, batch: Any, first: int) -> None:
            nonlocal tries
            tries += first == 1
            advance(io, batch, first)

        monkeypatch.setattr(log._keepers[0], "advance", counted)  # noqa: SLF001
        log.append(_rows(events))
        assert tries == 1 and log.last_seq() == 400


def test_a_batch_retried_after_the_map_grew_keeps_what_one_try_keeps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Room misjudged (none asked for): the map fills in a later piece, the transaction is abandoned
    with the keepers' work on the pieces before it, and the retry folds from the store again."""
    monkeypatch.setattr(bounded, "PIECE", 10)
    monkeypatch.setattr(bounded, "GROWTH", 0)
    long_case = "c" * 4000
    events = [
        k.TrialCompleted(run_id=RUN, variant="a", case=long_case, repeat=i, output_hash=BLOBS[0][0],
                         latency_ms=1.0)
        for i in range(400)
    ]  # fmt: skip
    with open_event_log(tmp_path / "st", map_size=1 << 20) as log:
        log.append(_rows(header(2, 3) + events), blobs=BLOBS)
        assert log.last_seq() == 401 and log._env.info()["map_size"] > 1 << 20  # type: ignore[union-attr]  # noqa: SLF001
        assert_snapshots_equal_replay(log, RUN, "retried")
        assert_index_is_the_fold(log, "retried")
