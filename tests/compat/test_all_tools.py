"""What every tool's users expect of paths: an agent or module beside the experiment file is found,
wherever engine is started from."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engine.errors import InputError
from engine.input.loader import load_plan
from engine.input.preflight import check_environment
from tests.compat.helpers import run_file, write_script

EXPERIMENT = """
name = "beside-the-file"
[target]
kind = "command"
command = {command}
[[cases]]
id = "hello"
prompt = "say hello"
expected = "hello from the agent"
[[graders]]
kind = "contains"
"""


async def test_a_relative_agent_binary_resolves_against_the_experiment_folder(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    write_script(folder / "bin" / "agent.sh", 'echo "hello from the agent"\n')
    (folder / "argv.toml").write_text(EXPERIMENT.format(command='["./bin/agent.sh", "--fast"]'))
    (folder / "shell.toml").write_text(EXPERIMENT.format(command='"bin/agent.sh --fast"'))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    cwd = Path.cwd()
    os.chdir(elsewhere)  # started from another folder: only the experiment's folder holds the agent
    try:
        for name in ("argv.toml", "shell.toml"):
            report = await run_file(folder / name)
            assert not report.errors, report.errors
            assert report.variants[0].pass_rate == 1.0
    finally:
        os.chdir(cwd)


async def test_a_python_target_imports_from_the_experiment_folder(tmp_path: Path) -> None:
    (tmp_path / "beside_agent.py").write_text("def answer(request):\n    return 'hello from the agent'\n")
    text = EXPERIMENT.replace('kind = "command"\ncommand = {command}', 'kind = "python"\ncallable = "x"')
    (tmp_path / "exp.toml").write_text(text.replace('"x"', '"beside_agent:answer"'))
    report = await run_file(tmp_path / "exp.toml")
    assert report.variants[0].pass_rate == 1.0


async def test_a_python_evaluator_imports_from_the_experiment_folder_or_is_refused(tmp_path: Path) -> None:
    (tmp_path / "beside_eval.py").write_text(
        "def grade(case, output, context):\n    return 'hello' in output\n"
    )
    text = EXPERIMENT.format(command='"echo hello from the agent"').replace(
        'kind = "contains"', 'kind = "python"\ncallable = "beside_eval:grade"'
    )
    (tmp_path / "exp.toml").write_text(text)
    report = await run_file(tmp_path / "exp.toml")
    assert report.variants[0].pass_rate == 1.0
    (tmp_path / "bad.toml").write_text(text.replace("beside_eval:grade", "no_such_eval:grade"))
    with pytest.raises(InputError, match=r"graders\[0\].callable: cannot import 'no_such_eval:grade'"):
        check_environment(load_plan(tmp_path / "bad.toml"))
