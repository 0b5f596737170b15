"""The log is handed its keepers (store.log.keepers) by whoever opens it for writing; the normal way,
`engine.store.open.open_event_log`, hands the default ones, and nothing outside the store builds a log
itself. A log opened without keepers still lists its runs, so readers fold the log where a kept
record is behind it, never trust one."""

from __future__ import annotations

import ast
from pathlib import Path

from engine.events import kinds as k
from engine.store.kept.read import kept_record
from engine.store.kept.snapshots import ALL, RUN_HEADS, SUMMARIES, load
from engine.store.log.event_log import EventLog
from engine.store.open import open_event_log
from tests.conftest import ROOT, run_engine
from tests.test_cli_run import experiment
from tests.test_snapshots import assert_snapshots_equal_replay, replayed, rows, started_run


def test_a_store_opened_the_normal_way_keeps_its_snapshots(tmp_path: Path) -> None:
    with open_event_log(tmp_path / "st") as log:
        log.append(rows(started_run("r", 3)))
        log.append(rows([k.RunCompleted(run_id="r", status="partial")]))
        for snap in ALL:
            stored = snap.decode(log.get_snapshot(snap.key("r")))
            assert stored is not None and stored.seq == log.last_seq(), snap.name
        assert_snapshots_equal_replay(log, "r")
        assert log.listed_runs() == ["r"]


def test_a_store_a_command_creates_keeps_its_snapshots(tmp_path: Path, write_experiment) -> None:
    file = write_experiment(experiment(cases=2, repeats=1))
    done = run_engine("create", str(file), "--run-id", "r1", "--store", "st", cwd=tmp_path)
    assert done.returncode == 0, done.stderr.decode()
    with open_event_log(tmp_path / "st", readonly=True) as log:
        summary = kept_record(log, SUMMARIES, "r1")
        assert summary is not None and summary.seq == log.last_seq()
        assert summary.state.status == "pending"


def test_a_log_without_keepers_lists_its_runs_and_its_readers_fold_the_log(tmp_path: Path) -> None:
    with open_event_log(tmp_path / "st") as log:
        log.append(rows(started_run("r", 2)))
        kept_at = log.last_seq()
    with EventLog(tmp_path / "st") as bare:  # no keepers: an append keeps no snapshot
        bare.append(rows(started_run("s", 1) + [k.RunCompleted(run_id="r", status="partial")]))
        assert bare.get_snapshot(SUMMARIES.key("s")) is None
        stored = SUMMARIES.decode(bare.get_snapshot(SUMMARIES.key("r")))
        assert stored is not None and stored.seq == kept_at  # behind the log now
        # the log's own list of runs and their last events stayed current
        assert bare.listed_runs() == ["r", "s"]
        assert bare.last_of("r") == bare.last_seq()
        for snap in (SUMMARIES, RUN_HEADS):  # folded forward from the stale snapshot
            assert snap.encode(bare.last_seq(), load(bare, snap, "r")) == replayed(bare, snap, "r")
        assert load(bare, SUMMARIES, "r").status == "partial"


def _builds_an_event_log(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    calls = [node.func for node in ast.walk(tree) if isinstance(node, ast.Call)]
    names = [f.id if isinstance(f, ast.Name) else getattr(f, "attr", "") for f in calls]
    return "EventLog" in names


def test_nothing_outside_the_store_builds_a_log_without_its_keepers() -> None:
    folders = ("engine", "cli", "actors", "benchmarks")
    found = [
        str(path.relative_to(ROOT))
        for folder in folders
        for path in sorted((ROOT / folder).rglob("*.py"))
        if _builds_an_event_log(path)
    ]
    assert found == [], "open the store with engine.store.open.open_event_log (it hands the log its keepers)"
    assert _builds_an_event_log(ROOT / "store" / "open.py")  # the one place that does
