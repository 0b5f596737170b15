"""The command (verifier) grader against real shell commands."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from engine.actors.graders import command_grader as command_module
from engine.actors.graders.command_grader import CommandGrader
from engine.actors.graders.factory import make_grader
from engine.actors.graders.grader_protocol import Submission
from engine.actors.process import ProcessResult, run_group
from engine.events.spec import CaseSpec, grader_spec
from tests.conftest import gone, pid_fifo, read_pid
from tests.test_command_target import STEPS_GUARD

CASE = CaseSpec(id="capital-fr", prompt="What is the capital of France?", expected="Paris")



def sub(case: CaseSpec, output: str) -> Submission:
    return Submission(case=case, output=output)

def grader(*commands: str, **fields: Any) -> CommandGrader:
    return CommandGrader(grader_spec(kind="command", commands=list(commands), **fields))


async def test_all_commands_pass():
    verdict = await grader(
        'grep -q "$ENGINE_EXPECTED" "$ENGINE_OUTPUT_FILE"', 'test "$ENGINE_CASE_ID" = capital-fr'
    ).grade(sub(CASE, "It is Paris."))
    assert (verdict.score, verdict.passed, verdict.reason) == (1.0, True, "")


async def test_partial_failure_scores_the_fraction_and_names_the_first_failure():
    verdict = await grader("true", "echo boom >&2; exit 2", "false").grade(sub(CASE, "x"))
    assert verdict.score == pytest.approx(1 / 3)
    assert not verdict.passed
    assert "echo boom >&2; exit 2" in verdict.reason
    assert "exited with 2" in verdict.reason and "boom" in verdict.reason


async def test_timeout_fails_the_command_and_kills_it(
    tmp_path: Path, mock_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch
):
    fifo = pid_fifo(tmp_path)
    slow = grader(f"sleep 30 & echo $! > {fifo}; wait", "true", timeout_s=5)
    verdicts, finished = [], []

    async def observed_run_group(*args: Any, **kwargs: Any) -> ProcessResult:
        finished.append(await run_group(*args, **kwargs))  # the real call, observed: no await in between
        return finished[-1]

    monkeypatch.setattr(command_module, "run_group", observed_run_group)

    async def grade() -> None:
        verdicts.append(await slow.grade(sub(CASE, "x")))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(grade)
        pid = await read_pid(fifo)  # the verifier is running: now let its timeout pass (mock clock)
        # in steps, once settled (it may not be in its scope yet), and only until the slow command is
        # over: a step taken while "true" runs would time that one out too
        for _ in range(STEPS_GUARD):
            if finished:
                break
            mock_clock.jump(5)
            await trio.testing.wait_all_tasks_blocked()
    (verdict,) = verdicts
    assert finished[0].timed_out and not finished[1].timed_out
    assert verdict.score == 0.5 and not verdict.passed and "timed out" in verdict.reason
    assert await gone(pid)


async def test_output_file_and_env_are_visible(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("RESULT_DIR", str(tmp_path))
    case = CaseSpec(id="c-2", prompt="p", expected=["Paris", 1])
    copy = 'cp output.txt "$RESULT_DIR/seen.txt"; pwd > "$RESULT_DIR/pwd.txt"'
    dump = 'printf "%s\\n%s" "$ENGINE_EXPECTED" "$ENGINE_OUTPUT_FILE" > "$RESULT_DIR/env.txt"'
    verdict = await grader(copy, dump).grade(sub(case, "héllo\nwörld"))
    assert verdict.passed
    assert (tmp_path / "seen.txt").read_text(encoding="utf-8") == "héllo\nwörld"
    expected, output_file = (tmp_path / "env.txt").read_text().splitlines()
    assert expected == '["Paris",1]'
    workdir = Path((tmp_path / "pwd.txt").read_text().strip())
    assert Path(output_file) == workdir / "output.txt"
    assert not workdir.exists()  # removed after grading


async def test_no_commands_is_unscored_and_factory_builds_it():
    verdict = await grader().grade(sub(CASE, "x"))
    assert verdict.score is None and not verdict.passed
    assert isinstance(make_grader(grader_spec(kind="command", commands=["true"])), CommandGrader)


async def test_a_case_brings_its_own_verifier_commands():
    case = CaseSpec(
        id="fix", prompt="p", criteria={"commands": ["grep -q fixed output.txt", "test -s output.txt"]}
    )
    passed = await grader().grade(sub(case, "bug fixed"))
    failed = await grader("true").grade(sub(case, "still broken"))
    assert (passed.score, passed.passed) == (1.0, True)
    # the grader's own commands run first, then the case's: one of three failed
    assert failed.score == pytest.approx(2 / 3) and "grep -q fixed" in failed.reason
    single = CaseSpec(id="one", prompt="p", criteria={"commands": "test -s output.txt"})
    assert (await grader().grade(sub(single, "x"))).passed
