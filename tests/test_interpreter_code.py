"""A placeholder inside code an interpreter runs (`sh -c`, `bash -lc`, `python3 -c`, `node -e`...)
is refused by `validate` and `run` before anything starts, with the argv form to write instead; that
form, and `$ENGINE_PROMPT`, carry hostile prompts as inert text through real subprocesses."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from engine.actors.targets.argv import shell_placeholders
from engine.actors.targets.interpreter_code import code_elements, code_placeholders
from engine.actors.targets.target_protocol import TargetError
from tests.conftest import run_engine
from tests.test_command_target import make_request, target

HOSTILE = [
    "$(touch {marker})", "`touch {marker}`", "x'; touch {marker}; '", 'x"; touch {marker}; "',
    "x'); __import__('os').system('touch {marker}'); print('", "a\\nb", "{case_id}",
]  # fmt: skip

REFUSED = {  # each shape an audit found running hostile prompts as code
    "sh -c": ["sh", "-c", "echo {prompt}"],
    "sh -c quoted": ["sh", "-c", 'echo "{prompt}"'],
    "bash -lc": ["bash", "-lc", "echo '{prompt}'"],
    "bash -o pipefail -c": ["bash", "-o", "pipefail", "-c", "echo {prompt}"],
    "python3 -c": ["python3", "-c", "print('{prompt}')"],
    "python3 -X dev -c": ["python3", "-X", "dev", "-c", "print('{prompt}')"],
    "env + timeout + sh -c": ["env", "A=1", "timeout", "10", "sh", "-c", "echo {prompt}"],
    "params in sh -c": ["sh", "-c", "echo {{ params.p }}"],
    "node -e": ["node", "-e", "console.log('{prompt}')"],
    "node --eval=": ["node", "--eval=console.log('{prompt}')"],
    "perl -lne": ["perl", "-lne", "print '{prompt}'"],
    "ruby -rset -e": ["ruby", "-rset", "-e", "puts '{prompt}'"],
    "awk program": ["awk", "BEGIN { print \"{prompt}\" }"],
    "eval of $1": ["sh", "-c", 'eval "$1"', "_", "{prompt}"],
}

ACCEPTED = {  # the prompt is an argv element of its own, or a script file's argument
    "positional": ["sh", "-c", 'printf %s "$1"', "_", "{prompt}"],
    "python script arg": ["python3", "-c", "import sys; print(sys.argv[1], end='')", "{prompt}"],
    "script file": ["python3", "agent.py", "-c", "{prompt}"],
    "module": ["python3", "-m", "agent", "-c", "{prompt}"],
    "plain": ["printf", "%s", "{prompt}"],
}


def placeholders(command: list[str]) -> list[tuple[int, list[str]]]:
    return code_placeholders(command, lambda word: shell_placeholders(word, "template"))


@pytest.mark.parametrize("shape", REFUSED)
def test_every_interpreter_shape_is_found(shape: str) -> None:
    found = placeholders(REFUSED[shape])
    assert found, shape
    index, names = found[0]
    assert index in set(code_elements(REFUSED[shape]))
    assert names in (["{prompt}"], ["{{ params.p }}"])


@pytest.mark.parametrize("shape", ACCEPTED)
def test_a_placeholder_in_its_own_argument_is_not_code(shape: str) -> None:
    assert placeholders(ACCEPTED[shape]) == []


@pytest.mark.parametrize("shape", ["sh -c", "sh -c quoted", "bash -lc", "python3 -c", "eval of $1"])
async def test_run_refuses_before_the_interpreter_starts(tmp_path: Path, shape: str) -> None:
    marker = tmp_path / "pwned"
    prompt = f"$(touch {marker}) `touch {marker}` '; touch {marker}; '"
    with pytest.raises(TargetError) as refused:
        await target(REFUSED[shape], prompt_via="template").call(make_request(prompt))
    assert refused.value.error_class == "config"
    assert "inside code that" in refused.value.message and "$ENGINE_PROMPT" in refused.value.message
    assert not marker.exists()


@pytest.mark.parametrize("hostile", HOSTILE)
async def test_the_printed_fix_and_the_environment_carry_hostile_prompts_as_text(
    tmp_path: Path, hostile: str
) -> None:
    marker = tmp_path / "pwned"
    prompt = hostile.replace("{marker}", str(marker))
    fixed = ["sh", "-c", 'printf %s "$1"', "_", "{prompt}"]  # the form the refusal prints
    response = await target(fixed, prompt_via="template").call(make_request(prompt))
    assert response.text == prompt
    from_env = await target(["sh", "-c", 'printf %s "$ENGINE_PROMPT"']).call(make_request(prompt))
    assert from_env.text == prompt
    assert not marker.exists()


@pytest.mark.skipif(shutil.which("python3") is None, reason="needs python3 on PATH")
def test_validate_names_the_element_and_prints_a_form_that_runs(tmp_path: Path) -> None:
    command = ["sh", "-c", 'echo "{prompt}"']
    (tmp_path / "exp.toml").write_text(
        f'name = "x"\n[target]\nkind = "command"\nprompt_via = "template"\ncommand = {json.dumps(command)}\n'
        '[[cases]]\nid = "c"\nprompt = "hi"\nexpected = "hi"\n'
    )
    result = run_engine("validate", "exp.toml", cwd=tmp_path)
    err = result.stderr.decode()
    assert result.returncode == 2 and "Traceback" not in err
    assert "target.command[2]" in err and "inside code that sh runs" in err
    suggested = json.loads(err[err.index("e.g. ") + 5 : err.index("]", err.index("e.g. ")) + 1])
    fixed = json.dumps([*suggested[:-1], "{prompt}"])
    experiment = tmp_path / "exp.toml"
    experiment.write_text(experiment.read_text().replace(json.dumps(command), fixed))
    assert run_engine("validate", "exp.toml", cwd=tmp_path).returncode == 0
