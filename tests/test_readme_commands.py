"""The README's command list and `engine --help` name the same commands; a new user is told how to
put `engine` on the PATH before the README first uses it, and `make demo` ends by saying so."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import run_engine

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def readme_commands() -> set[str]:
    block = README.split("## Using it", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    return {found[1] for found in re.finditer(r"^engine ([a-z-]+)", block, re.M)}


def help_commands(tmp_path: Path) -> set[str]:
    shown = run_engine("--help", cwd=tmp_path).stdout.decode()
    listed = shown.split("Commands:", 1)[1]
    return {found[1] for found in re.finditer(r"^  ([a-z-]+)\s", listed, re.M)}


def test_the_readme_lists_every_command_and_only_real_ones(tmp_path: Path) -> None:
    documented, real = readme_commands(), help_commands(tmp_path)
    assert len(real) > 15 and {"history", "mark", "judge-audit"} <= real
    assert documented == real, (documented - real, real - documented)


def test_the_path_is_explained_before_the_readme_first_types_engine() -> None:
    first_use = re.search(r"^engine [a-z]", README, re.M)
    assert first_use is not None
    assert ". .venv/bin/activate" in README[: first_use.start()]


def test_make_demo_ends_by_telling_how_to_put_engine_on_the_path() -> None:
    makefile = (ROOT / "Makefile").read_text()
    demo = makefile.split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    last = demo.strip().splitlines()[-1]
    assert "echo" in last and ". $(VENV)/bin/activate" in last
