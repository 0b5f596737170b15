"""At COLUMNS=100, everything each command prints for a person fits 100 columns, except a command to
copy, which is printed whole on a line of its own (wrapped, pasting its first line would run
something else). Error lines are one line each and are checked for that elsewhere (a list of valid
choices can make one longer)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import run_engine

ROOT = Path(__file__).resolve().parent.parent
WIDTH = 100


def too_wide(text: str) -> list[str]:
    """Lines wider than 100 columns that are not a command, or one path, on a line of its own."""
    return [
        line for line in text.splitlines()
        if len(line.rstrip()) > WIDTH and not line.lstrip().startswith("engine ")
        and len(line.split()) > 1
    ]  # fmt: skip


@pytest.fixture(scope="module")
def cwd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with two runs of the quickstart and a tuning session, experiment files under a long
    path (the rerun commands name it in full)."""
    folder = tmp_path_factory.mktemp("widths") / ("a-rather-long-folder-name-for-experiments" * 2)
    folder.mkdir()
    for name in ("quickstart.toml", "tune.toml"):
        shutil.copy(ROOT / "examples" / name, folder / name)
    return folder


COMMANDS: list[list[str]] = [
    ["run", "quickstart.toml", "--run-id", "20261125-132822-1a939f"],
    ["run", "quickstart.toml", "--run-id", "20261125-132822-1a939e", "--seed", "3"],
    ["run", "tune.toml", "--run-id", "20261125-132822-1a939d"],
    ["create", "quickstart.toml", "--run-id", "20261125-132822-1a939c"],
    ["list"],
    ["status", "20261125-132822-1a939f"],
    ["status", "20261125-132822-1a939d"],
    ["status", "20261125-132822-1a939c"],
    ["report", "20261125-132822-1a939f"],
    ["report", "20261125-132822-1a939d"],
    ["replay", "20261125-132822-1a939f"],
    ["compare", "20261125-132822-1a939f", "20261125-132822-1a939e"],
    ["history", "quickstart-concise-vs-verbose"],
    ["mark", "20261125-132822-1a939f", "green"],
    ["best"],
    ["promote", "20261125-132822-1a939d", "--to", "agent.toml"],
    ["regrade", "20261125-132822-1a939f", "--graders", "quickstart.toml"],
    ["cancel", "20261125-132822-1a939c"],
    ["check"],
    ["backup", "a-backup-folder-with-a-long-name-to-show-that-its-verify-command-is-still-whole"],
    ["validate", "tune.toml"],
    ["validate", "quickstart.toml"],
]


def test_every_command_fits_100_columns_or_prints_a_whole_command(cwd: Path) -> None:
    for args in COMMANDS:
        store = [] if args[0] == "validate" else ["--store", "st"]
        done = run_engine(*args, *store, cwd=cwd, COLUMNS=str(WIDTH))
        assert done.returncode == 0, (args, done.stderr.decode())
        out, err = done.stdout.decode(), done.stderr.decode()
        assert not too_wide(out) and not too_wide(err), (args, too_wide(out + err))
    shown = run_engine("report", "20261125-132822-1a939d", "--store", "st", cwd=cwd, COLUMNS=str(WIDTH))
    commands = [line for line in shown.stdout.decode().splitlines() if line.lstrip().startswith("engine run")]
    assert commands and all(len(line) > WIDTH for line in commands)  # whole, though wider


def test_a_yaml_mistake_is_one_short_line(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("name: x\ncases:\n  - id: a\n   prompt: b\n")
    done = run_engine("validate", "bad.yaml", cwd=tmp_path, COLUMNS=str(WIDTH))
    lines = done.stderr.decode().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and len(lines[0]) <= WIDTH, lines
