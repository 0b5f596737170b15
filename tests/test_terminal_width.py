"""The quick start's walk-through at 100 columns: every line engine prints to a terminal (tables,
one-line errors and warnings, hints) fits in 100 columns, but a command printed whole on its own line
for a person to copy."""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

from tests.conftest import ROOT, run_engine

WIDTH = 100
WALK = (
    "run quickstart.toml --run-id q1 --store st",
    "run quickstart.toml --run-id q2 --seed 8 --store st",
    "validate quickstart.toml",
    "report q1 --store st",
    "list --store st",
    "status q1 --store st",
    "history quickstart-concise-vs-verbose --store st",
    "compare q1 q2 --store st",
    "mark q1 green --store st",
    "compare last-green q2 --gate --store st",
    "check --store st",
    "run nothing.toml --store st",
    "report nope --store st",
)


def too_wide(text: str) -> list[str]:
    lines = text.splitlines()
    return [line for line in lines if len(line) > WIDTH and not line.strip().startswith("engine ")]


def test_the_quick_start_walk_through_fits_100_columns(tmp_path: Path) -> None:
    shutil.copy(ROOT / "examples" / "quickstart.toml", tmp_path)
    for command in WALK:
        done = run_engine(*shlex.split(command), cwd=tmp_path, COLUMNS=str(WIDTH))
        wide = too_wide(done.stdout.decode() + done.stderr.decode())
        assert not wide, f"engine {command}: {wide}"
