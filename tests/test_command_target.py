"""The command target against real subprocesses: prompt delivery, env, exit codes, group kill, setup."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio
import trio.testing

from engine.actors.targets.command_target import CommandTarget
from engine.actors.targets.target_protocol import TargetError, TargetRequest
from engine.events.spec import CaseSpec, VariantSpec
from tests.conftest import gone, pid_fifo, read_pid
from tests.shims import target_spec


def make_request(prompt: str = "hello world", *, timeout_s: float = 5.0, **variant: Any) -> TargetRequest:
    spec = VariantSpec(name="concise", **variant)
    return TargetRequest(
        run_id="run1", variant=spec, case=CaseSpec(id="capital-fr", prompt=prompt), repeat=2, prompt=prompt,
        model="m-1", system="Be brief.", params=spec.params, flags=spec.flags, seed=7, timeout_s=timeout_s,
    )  # fmt: skip


STEPS_GUARD = 100_000  # a hang guard for clock-stepping loops (they end on progress, not on a count)


def target(command: list[str] | str, **fields: Any) -> CommandTarget:
    return CommandTarget(target_spec(kind="command", command=command, **fields))


async def test_prompt_via_stdin():
    response = await target(["cat"]).call(make_request("what is 2+2"))
    assert response.text == "what is 2+2"
    assert response.exit_code == 0
    assert (response.tokens_in, response.tokens_out) == (3, 3)


async def test_prompt_via_arg_argv_and_shell_string():
    tricky = 'it\'s $HOME "quoted"; echo pwned'
    response = await target(["printf", "%s"], prompt_via="arg").call(make_request(tricky))
    assert response.text == tricky
    response = await target("printf '<%s>'", prompt_via="arg").call(make_request(tricky))
    assert response.text == f"<{tricky}>"


async def test_prompt_via_template_fills_argv_elements():
    argv = ["printf", "%s|%s|%s|%s|%s", "{prompt}", "{model}", "{system}", "{case_id}", "{variant}"]
    response = await target(argv, prompt_via="template").call(make_request("say {hi}"))
    assert response.text == "say {hi}|m-1|Be brief.|capital-fr|concise"


async def test_a_shell_string_with_a_placeholder_is_refused_before_it_runs(tmp_path: Path):
    marker = tmp_path / "pwned"
    shell = 'echo "{prompt}" > ' + str(tmp_path / "out")
    with pytest.raises(TargetError) as refused:
        await target(shell, prompt_via="template").call(make_request(f"$(touch {marker})"))
    assert refused.value.error_class == "config" and "argv list" in refused.value.message
    assert '["sh", "-c", "echo \\"$1\\" > ' in refused.value.message  # the argv form to write instead
    assert not marker.exists() and not (tmp_path / "out").exists()
    with pytest.raises(TargetError) as refused:
        await target("printf '{{ matrix.m }}'").call(make_request(params={"m": "x"}))
    assert refused.value.message.endswith('write command = ["printf", "{{ matrix.m }}"]')


HOSTILE = ["$(touch {marker})", "`touch {marker}`", "x'; touch {marker}; '", "Don't ramble.", "{case_id}"]
NAMES = ["prompt", "system", "case_id", "model", "variant", "{ params.p }"]
SHAPES = {  # the argv forms a refused shell string is told to use instead
    "argv": ["printf", "%s|%s|%s|%s|%s|%s", *("{" + n + "}" for n in NAMES)],
    "sh -c with $1..": ["sh", "-c", 'printf "%s|%s|%s|%s|%s|%s" "$1" "$2" "$3" "$4" "$5" "$6"', "sh",
                        *("{" + n + "}" for n in NAMES)],
}  # fmt: skip


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("placeholder", NAMES)
@pytest.mark.parametrize("hostile", HOSTILE)
async def test_a_hostile_value_in_any_template_placeholder_is_inert_text(
    tmp_path: Path, placeholder: str, hostile: str, shape: str
):
    marker = tmp_path / "pwned"
    value = hostile.format(marker=marker) if "{marker}" in hostile else hostile
    fields = {"prompt": "the prompt mentions {case_id} and {system}", "case_id": "capital-fr",
              "system": "Be brief.", "model": "m-1", "variant": "concise", "{ params.p }": "plain"}
    fields[placeholder] = value
    spec = VariantSpec(name=fields["variant"], params={"p": fields["{ params.p }"]})
    request = TargetRequest(
        run_id="run1", variant=spec, case=CaseSpec(id=fields["case_id"], prompt=fields["prompt"]), repeat=1,
        prompt=fields["prompt"], model=fields["model"], system=fields["system"], params=spec.params,
        flags={}, seed=7, timeout_s=5.0,
    )  # fmt: skip
    response = await target(SHAPES[shape], prompt_via="template").call(request)
    assert response.text == "|".join(fields[n] for n in NAMES)
    assert not marker.exists()


async def test_env_carries_trial_identity_flags_and_params(monkeypatch: pytest.MonkeyPatch):
    # an unsandboxed agent inherits the caller's environment: CI's own ENGINE_* settings are not the trial's
    for name in [name for name in os.environ if name.startswith("ENGINE_")]:
        monkeypatch.delenv(name)
    dump = "import json, os\n"
    dump += "print(json.dumps({k: v for k, v in os.environ.items() if k[:7] in ('ENGINE_', 'FOO')}))"
    request = make_request(
        flags={"max-retries": 5, "mode": "fast", "tools": {"web": True}}, params={"temperature": 0.2}
    )
    response = await target([sys.executable, "-c", dump], env={"FOO": "bar"}).call(request)
    env = json.loads(response.text)
    assert env.pop("ENGINE_METRICS_FILE").endswith("engine-metrics.json")
    assert env.pop("ENGINE_TRANSCRIPT").endswith("engine-transcript.jsonl")
    assert env == {
        "FOO": "bar", "ENGINE_VARIANT": "concise", "ENGINE_CASE_ID": "capital-fr", "ENGINE_REPEAT": "2",
        "ENGINE_SEED": "7", "ENGINE_MODEL": "m-1", "ENGINE_SYSTEM": "Be brief.",
        "ENGINE_FLAG_MAX_RETRIES": "5", "ENGINE_FLAG_MODE": "fast", "ENGINE_FLAG_TOOLS": '{"web":true}',
        "ENGINE_PARAM_TEMPERATURE": "0.2", "ENGINE_PROMPT": "hello world",
    }  # fmt: skip


async def test_an_agent_reports_its_tokens_cost_and_metrics_and_its_stderr_is_kept():
    script = (
        "import json, os, sys\n"
        "print('working', file=sys.stderr)\n"
        "json.dump({'tokens_in': 1200, 'tokens_out': 300, 'cost_usd': 0.0125, 'tool_calls': 7,"
        " 'model': 'not-a-number'}, open(os.environ['ENGINE_METRICS_FILE'], 'w'))\n"
        "print('done')\n"
    )
    response = await target([sys.executable, "-c", script]).call(make_request())
    assert (response.tokens_in, response.tokens_out, response.cost_usd) == (1200, 300, 0.0125)
    assert response.metrics == {"tool_calls": 7.0} and response.stderr == "working\n"
    quiet = await target("echo hi").call(make_request())  # no report: words stand in for tokens
    assert (quiet.tokens_out, quiet.metrics, quiet.stderr) == (1, {}, "")


async def test_nonzero_exit_is_an_agent_exit_error_with_its_stderr():
    with pytest.raises(TargetError) as caught:
        await target("echo partial answer; echo crashed >&2; exit 3").call(make_request())
    error = caught.value
    assert (error.error_class, error.agent_exit_code, error.retryable) == ("agent_exit", 3, False)
    assert "exited with 3" in error.message and "crashed" in error.message


async def test_nonzero_exit_is_graded_when_an_exit_code_grader_asks_for_it():
    request = msgspec.structs.replace(make_request(), accept_nonzero_exit=True)
    response = await target("echo partial answer; exit 3").call(request)
    assert response.text == "partial answer\n"
    assert response.exit_code == 3


async def test_output_is_capped_at_one_mebibyte():
    response = await target("head -c 3000000 /dev/zero | tr '\\0' a").call(make_request())
    assert response.text == "a" * (1 << 20)


async def call_until_timeout(agent: CommandTarget, fifo: Path, clock: trio.testing.MockClock) -> TargetError:
    """Call the agent, wait until it has started (it writes its child's pid to the FIFO), then let
    the trial's timeout pass on the mock clock: no real time is raced.

    The agent may write its pid before the call has entered its timeout scope (the process starts
    in a worker thread), so the clock moves on in steps, each once everything has settled, until
    the call has failed: whichever step first finds the call waiting in its scope fires it."""
    failures: list[TargetError] = []

    async def call() -> None:
        try:
            await agent.call(make_request(timeout_s=5))
        except TargetError as exc:
            failures.append(exc)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(call)
        pid = await read_pid(fifo)
        for _ in range(STEPS_GUARD):  # each step a timeout's worth: one fires the trial's, the next any grace
            if failures:
                break
            clock.jump(5)
            await trio.testing.wait_all_tasks_blocked()
    (failure,) = failures
    failure.pid = pid  # type: ignore[attr-defined]
    return failure


async def test_timeout_kills_the_whole_group(tmp_path: Path, mock_clock: trio.testing.MockClock):
    fifo, dirfile = pid_fifo(tmp_path), tmp_path / "dir"
    agent = target('pwd > "$DIRFILE"; sleep 30 & echo $! > "$PIDFILE"; wait', env={
        "PIDFILE": str(fifo), "DIRFILE": str(dirfile)
    })  # fmt: skip
    failure = await call_until_timeout(agent, fifo, mock_clock)
    assert failure.kind == "timeout" and not failure.retryable
    assert await gone(failure.pid)  # type: ignore[attr-defined]
    assert not Path(dirfile.read_text().strip()).exists()  # the trial's temp dir is gone too


async def test_sigterm_ignored_escalates_to_sigkill(tmp_path: Path, mock_clock: trio.testing.MockClock):
    fifo = pid_fifo(tmp_path)
    # an ignored signal stays ignored across fork and exec: neither sh nor its sleep obeys SIGTERM
    agent = target('trap "" TERM; sleep 30 & echo $! > "$PIDFILE"; wait', env={"PIDFILE": str(fifo)})
    failure = await call_until_timeout(agent, fifo, mock_clock)
    assert "timed out" in failure.message
    assert await gone(failure.pid)  # type: ignore[attr-defined]


async def test_cancellation_kills_the_whole_group(tmp_path: Path):
    fifo = pid_fifo(tmp_path)
    agent = target('sleep 30 & echo $! > "$PIDFILE"; wait', env={"PIDFILE": str(fifo)})
    async with trio.open_nursery() as nursery:
        nursery.start_soon(agent.call, make_request(timeout_s=30))
        pid = await read_pid(fifo)
        nursery.cancel_scope.cancel()
    assert await gone(pid)


async def test_leftovers_are_killed_when_the_agent_exits(tmp_path: Path):
    pidfile = tmp_path / "pid"
    # the background sleep keeps stdout open: without the group kill this would wait 30 s
    agent = target('sleep 30 & echo $! > "$PIDFILE"; echo done', env={"PIDFILE": str(pidfile)})
    response = await agent.call(make_request())
    assert response.text == "done\n" and response.exit_code == 0
    assert await gone(int(pidfile.read_text()))


async def test_missing_executable_is_a_config_error():
    with pytest.raises(TargetError) as caught:
        await target(["/nonexistent/agent-cli", "--flag"]).call(make_request())
    assert caught.value.kind == "config" and "/nonexistent/agent-cli" in caught.value.message
    with pytest.raises(TargetError) as caught:
        await target("no-such-agent-cli-xyz --flag").call(make_request())
    assert caught.value.kind == "config" and "no-such-agent-cli-xyz" in caught.value.message
    with pytest.raises(TargetError, match="not set"):
        await target([]).call(make_request())


async def test_variant_setup_runs_in_the_trial_dir_before_the_agent():
    setup = ["echo one > setup.txt", 'echo "$ENGINE_FLAG_DOCS" >> setup.txt']
    response = await target("cat setup.txt; pwd").call(make_request(setup=setup, flags={"docs": "with"}))
    lines = response.text.splitlines()
    assert lines[:2] == ["one", "with"]
    assert Path(lines[2]).name.startswith("engine-trial-")
    assert not Path(lines[2]).exists()


async def test_failing_setup_names_the_command_and_skips_the_agent(tmp_path: Path):
    marker = tmp_path / "agent-ran"
    setup = ["true", "echo cannot install >&2; exit 4", "echo never"]
    agent = target(["touch", str(marker)])
    with pytest.raises(TargetError) as caught:
        await agent.call(make_request(setup=setup))
    assert caught.value.kind == "config"
    assert "echo cannot install >&2; exit 4" in caught.value.message
    assert "exited with 4" in caught.value.message and "cannot install" in caught.value.message
    assert not marker.exists()


async def test_fixed_workdir_is_used_and_kept(tmp_path: Path):
    response = await target(["pwd"], workdir=str(tmp_path)).call(make_request(setup=["false"]))
    assert response.text.strip() == os.path.realpath(tmp_path)
    assert tmp_path.exists()
