"""Every command the README documents, at 100 columns: its help (the synopsis a person reads before
running it) fits, but a whole command on its own line; the quick start's walk-through runs in
tests/test_terminal_width.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_engine
from tests.test_terminal_width import WIDTH, too_wide


def documented_commands() -> list[str]:
    """The command names of every `engine ...` line in the README's fenced blocks."""
    text = (ROOT / "README.md").read_text()
    found: list[str] = []
    for block in re.findall(r"```\w*\n(.*?)```", text, re.S):
        for line in block.splitlines():
            words = line.strip().removeprefix("$ ").split()
            if len(words) > 1 and words[0] in ("engine", ".venv/bin/engine") and words[1] not in found:
                found.append(words[1])
    return found


def test_the_readme_documents_every_command() -> None:
    from engine.cli.main import COMMANDS

    assert set(documented_commands()) == {name for name, _, _ in COMMANDS}


@pytest.mark.parametrize("command", documented_commands())
def test_a_documented_commands_help_fits_100_columns(command: str, tmp_path: Path) -> None:
    done = run_engine(command, "--help", cwd=tmp_path, COLUMNS=str(WIDTH))
    assert done.returncode == 0, done.stderr.decode()
    text = done.stdout.decode()
    assert f"engine {command}" in text.replace("\n", " ") or "Usage:" in text
    assert not too_wide(text + done.stderr.decode()), f"engine {command} --help"


def test_a_store_kept_by_another_engine_version_says_how_to_write_it_anew(tmp_path: Path) -> None:
    """A kept summary of another version is read past (the log is folded instead): slow on a big
    store, so the read says so and prints the command that writes the records anew; run as printed,
    it does, and the note is gone."""
    from engine.store.kept.codec import VersionedAs
    from engine.store.kept.read import SUMMARIES
    from engine.store.open import open_event_log
    from engine.store.projections.summary import RunSummary

    experiment = tmp_path / "exp.toml"
    experiment.write_text('name = "e"\n[[cases]]\nid = "c1"\nprompt = "hello"\nexpected = "hello"\n')
    ran = run_engine("run", str(experiment), "-q", "--run-id", "r1", "--store", "st", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr.decode()
    older = VersionedAs(SUMMARIES.name, RunSummary, "0.older-engine")
    with open_event_log(tmp_path / "st") as log:
        log.put_snapshots([(SUMMARIES.key("r1"), older.encode(1, RunSummary("r1")))])
    listed = run_engine("list", "--store", "st", cwd=tmp_path)
    said = listed.stderr.decode()
    assert listed.returncode == 0 and "r1" in listed.stdout.decode() and "another engine version" in said
    command = said.strip().splitlines()[-1].strip().split(":  ", 1)[-1].split()  # on its line if long
    assert command[:2] == ["engine", "rebuild"]
    assert run_engine(*command[1:], cwd=tmp_path).returncode == 0
    again = run_engine("list", "--store", "st", cwd=tmp_path)
    assert again.returncode == 0 and again.stderr == b""
