"""`engine list`, `status` and `history` import only their read path (no timing here: the figures are
in benchmarks/README.md, "Whole commands"). Each runs in a fresh interpreter on a small real store,
and what it imported is read from sys.modules once the command is done."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import engine_env, run_engine
from tests.test_cli_run import experiment

# what reading kept summaries, status figures and reports never needs: the concurrency runtime, the
# statistics' numpy, the histogram library, the trial index, the writer's keeper, the plan, actors;
# and rich, since engine draws its tables itself (presentation.term_table). typer is imported: it is
# the one parser (its cost: benchmarks/README.md#one-parser-one-terminal-table)
NEVER = [
    "trio", "numpy", "hdrh", "engine.actors", "engine.input.experiment_plan",
    "engine.store.trial_index.index", "engine.store.kept.snapshots", "engine.store.log.verify",
    "engine.presentation.terminal", "hashlib", "engine.store.projections.report_builder", "rich",
]  # fmt: skip
# status reads its kept figures (checked against the run state's version its writer recorded in the store:
# store.kept.state_source)
# and folds the run state only when they are behind the log; list reads neither
NOT_FOR_LIST = [
    "engine.store.kept.status_record", "engine.store.projections.run_state",
    "engine.store.kept.state_snapshot",
    "socket",
]  # fmt: skip
PROBE = """
import json, sys
from engine.cli.main import main
sys.argv = ["engine", *sys.argv[1:]]
try:
    main()
except SystemExit as exc:
    code = exc.code
watched = json.loads(sys.stdin.read())
print(json.dumps({"code": code, "loaded": [m for m in watched if m in sys.modules]}), file=sys.stderr)
"""


def imported(tmp_path: Path, *args: str) -> list[str]:
    command = [sys.executable, "-c", PROBE, *args, "--store", "st"]
    watched = json.dumps(NEVER + NOT_FOR_LIST).encode()
    done = subprocess.run(command, cwd=tmp_path, env=engine_env(), input=watched, capture_output=True)
    report = json.loads(done.stderr.decode().splitlines()[-1])
    assert report["code"] in (0, None), done.stderr.decode()
    return report["loaded"]


def make_store(tmp_path: Path, write_experiment, name: str = "capitals") -> Path:
    text = experiment(cases=3, repeats=1).replace('name = "capitals"', f'name = "{name}"', 1)
    file = write_experiment(text, "capitals.toml")
    done = run_engine("run", str(file), "-q", "--run-id", "r1", "--store", "st", cwd=tmp_path)
    assert done.returncode == 0, done.stderr.decode()
    return tmp_path


@pytest.fixture
def store(tmp_path: Path, write_experiment) -> Path:
    return make_store(tmp_path, write_experiment)


def test_list_status_history_import_their_read_path_only(store: Path) -> None:
    assert imported(store, "list") == []
    assert imported(store, "list", "--json") == []
    # the probe sees what a command imports; a finished run's status does not fold its state
    assert imported(store, "status", "r1") == ["engine.store.kept.status_record"]
    # history reads the reports' digests, not the reports (whose content hashes need hashlib)
    history = imported(store, "history", "capitals")
    assert [m for m in history if m in NEVER + NOT_FOR_LIST] == []


def test_a_table_that_must_wrap_imports_no_rich(tmp_path: Path, write_experiment) -> None:
    name = "capitals-" + "x" * 31  # 40 characters; its history's title is longer than the table
    make_store(tmp_path, write_experiment, name)
    assert imported(tmp_path, "list") == []
    assert "rich" not in imported(tmp_path, "history", name)


def test_a_current_reports_json_is_read_not_built(store: Path) -> None:
    """`engine report --json` of a finished run prints its stored report: the state's fold, the keeper
    and the report's builder are not imported."""
    loaded = imported(store, "report", "r1", "--json")
    assert [m for m in loaded if m not in ("hashlib", "engine.store.kept.status_record")] == []
