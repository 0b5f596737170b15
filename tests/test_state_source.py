"""The run state's pinned version and tags (store.state_source) are the state's own: a change to the
run state's fields or fold fails here until the pin is updated, so a status record kept beside an
older state is never read as current."""

from __future__ import annotations

import pytest

from engine.store.kept.snapshots import DERIVED
from engine.store.kept.state_snapshot import STATES
from engine.store.kept.state_source import RUN_STATE_SOURCE


def test_the_pin_is_the_run_states_version_and_tags() -> None:
    assert RUN_STATE_SOURCE.name == STATES.name
    assert RUN_STATE_SOURCE.version == STATES.version, "update store/kept/state_source.py to this version"
    assert RUN_STATE_SOURCE.tags == STATES.projection.tags, "update store/kept/state_source.py's tags"


def test_every_derived_record_names_its_kept_source() -> None:
    for name, records in DERIVED.items():
        for record in records:
            assert record.source.name == name
            assert record.version.endswith("+" + STATES.version)


def test_the_kept_state_heads_reader_reads_the_run_states_snapshots() -> None:
    from engine.store.projections import kept_head

    assert kept_head.STATES.key("r1") == STATES.key("r1")
    assert kept_head.STATES.version == STATES.version


def test_a_stale_pin_writes_no_derived_record(monkeypatch: pytest.MonkeyPatch) -> None:
    from engine.store.kept import snapshots

    assert snapshots.derived_of(STATES.name)  # the pin holds: the status figures are kept
    stale = RUN_STATE_SOURCE._replace(version="2.00000000")
    monkeypatch.setattr(snapshots, "RUN_STATE_SOURCE", stale)
    snapshots._pin_holds.cache_clear()
    try:
        assert snapshots.derived_of(STATES.name) == ()  # readers fold the state instead
    finally:
        monkeypatch.undo()
        snapshots._pin_holds.cache_clear()
