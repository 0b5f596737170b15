"""The run state's version and tags, as readers of its derived records know them, come from the code
they describe: the writer computes them from the state's definition (its types' fingerprint, its
fold's tags) and records them in the store (store.kept.state_source); `engine status` and the
report's currency check read them there, and a record derived from another version is never read as
current: readers fold the log instead."""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path
from typing import Any

import pytest

from engine.events import kinds as k
from engine.events.kinds import TAG_BY_TYPE
from engine.store.kept.codec import Snapshotted
from engine.store.kept.read import kept, load
from engine.store.kept.snapshots import DERIVED, rebuild
from engine.store.kept.state_snapshot import STATES
from engine.store.kept.state_source import SOURCE, StateSource, recorded_source, source_record
from engine.store.kept.status_record import STATUS
from engine.store.memory import MemoryStore
from engine.store.open import open_event_log
from engine.store.projection import Projection
from engine.store.projections.kept_head import kept_state_head, states_as
from engine.store.projections.run_state import RUN_STATE, RunState
from engine.store.projections.status import counts_of
from tests.test_snapshots import rows, started_run


def variant_of(kind: type, changes: dict[str, type], added: dict[str, type]) -> type:
    """A dataclass of `kind`'s name and fields, some of another type, some added."""
    hints = typing.get_type_hints(kind)
    fields: list[Any] = [
        (f.name, changes.get(f.name, hints[f.name]), dataclasses.field(default=None))
        for f in dataclasses.fields(kind)
    ]
    fields += [(name, added_type, dataclasses.field(default=None)) for name, added_type in added.items()]
    return dataclasses.make_dataclass(kind.__name__, fields)


def state_of(kind: type, without: str = "") -> Snapshotted[Any]:
    """The run state's kept snapshot, of `kind`, its fold handling every event but `without`."""
    handlers = {t: h for t, h in RUN_STATE.handlers.items() if TAG_BY_TYPE[t] != without}
    return Snapshotted("state", 2, Projection(handlers), kind, kind)


def test_the_version_is_computed_from_the_states_definition() -> None:
    assert STATES.source == StateSource("state", STATES.version, RUN_STATE.tags)
    assert state_of(variant_of(RunState, {}, {})).source == STATES.source  # the same fields: the same
    added = state_of(variant_of(RunState, {}, {"retries": int}))
    retyped = state_of(variant_of(RunState, {"source": bytes}, {}))
    assert len({STATES.source.version, added.source.version, retyped.source.version}) == 3
    fewer_tags = state_of(RunState, without="trial.skipped")
    assert fewer_tags.source.version == STATES.source.version and fewer_tags.source != STATES.source


def test_every_derived_record_names_its_kept_source() -> None:
    for name, records in DERIVED.items():
        for record in records:
            assert record.source == name == STATES.name
            assert record.made_from(STATES.source).version.endswith("+" + STATES.version)


def ended_run(log: Any) -> None:
    log.append(rows(started_run("r", 4)))
    log.append(rows([k.RunCompleted(run_id="r", status="completed")]))  # the end: the state is saved


@pytest.mark.parametrize("store", ["memory", "lmdb"])
def test_the_writer_records_the_state_it_folds(tmp_path: Path, store: str) -> None:
    log: Any = MemoryStore() if store == "memory" else open_event_log(tmp_path / "st")
    with log:
        ended_run(log)
        assert recorded_source(log, "state") == STATES.source
        assert kept(log, STATUS, "r") == counts_of(load(log, STATES, "r"))
        head = kept_state_head(log, "r")
        assert head is not None and head[0] == log.last_seq() and head[1].status == "completed"
        assert states_as(STATES.source.version).key("r") == STATES.key("r")
        before = log.get_snapshot(SOURCE + b"state")
        rebuild(log)  # rebuilt from the log: recorded again, the same bytes
        assert log.get_snapshot(SOURCE + b"state") == before


def test_records_of_another_version_of_the_state_are_never_read(tmp_path: Path) -> None:
    with open_event_log(tmp_path / "st") as log:
        ended_run(log)
        # a writer whose state has another field recorded its version: this one's records are stale
        other = state_of(variant_of(RunState, {}, {"retries": int})).source
        log.put_snapshots([source_record(other)])
        assert recorded_source(log, "state") == other
        assert kept(log, STATUS, "r") is None  # `engine status` folds the state instead
        assert kept_state_head(log, "r") is None  # `engine report` asks the log instead
    with open_event_log(tmp_path / "st") as log:  # a writer of this version records its own again
        log.append(rows([k.RunMarked(run_id="r", mark="green")]))
        assert recorded_source(log, "state") == STATES.source
        assert kept(log, STATUS, "r") == counts_of(load(log, STATES, "r"))


def test_no_record_or_a_damaged_one_reads_as_none_recorded(tmp_path: Path) -> None:
    with open_event_log(tmp_path / "st") as log:
        ended_run(log)
        key, value = source_record(STATES.source)
        log.put_snapshots([(key, value[:-1] + bytes([value[-1] ^ 1]))])  # one bit changed on disk
        assert recorded_source(log, "state") is None
        assert kept(log, STATUS, "r") is None and kept_state_head(log, "r") is None
    assert recorded_source(MemoryStore(), "state") is None  # nothing written yet
