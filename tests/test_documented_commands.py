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
