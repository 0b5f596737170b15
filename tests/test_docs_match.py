"""The docs say what runs: the experiment file's reference example validates as written, and every
option of `engine run` is in the README."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import ROOT, run_engine


def test_the_reference_experiment_file_validates(tmp_path: Path) -> None:
    text = (ROOT / "docs" / "experiment-file.md").read_text()
    example = text.split("```toml\n", 1)[1].split("```", 1)[0]
    (tmp_path / "ref.toml").write_text(example)
    # what the example names beside it: its Python evaluator, and the variables holding keys
    (tmp_path / "evaluator.py").write_text("def grade(case, output, context):\n    return True\n")
    done = run_engine("validate", "ref.toml", cwd=tmp_path, OPENAI_API_KEY="k", AZURE_KEY="k")
    assert done.returncode == 0, done.stderr.decode()
    assert "ref.toml: ok" in done.stdout.decode()


def test_every_option_of_engine_run_is_documented(tmp_path: Path) -> None:
    helped = run_engine("run", "--help", cwd=tmp_path, COLUMNS="200").stdout.decode()
    options = set(re.findall(r"--[a-z][a-z-]+", helped)) - {"--help"}
    readme = (ROOT / "README.md").read_text()
    assert options and not {o for o in options if o not in readme}
