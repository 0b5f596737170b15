"""An agent CLI as the target: one real subprocess per trial (agent experiments).

Each trial runs in its own session, so a timeout or a cancelled run kills the
whole process group (the agent's tools and servers included), not just the
direct child. Variant flags and params reach the agent as ENGINE_FLAG_* /
ENGINE_PARAM_* environment variables.
"""

from __future__ import annotations

import math
import os
import shlex
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

import msgspec
import trio
from msgspec.structs import replace

from engine.actors.process import ProcessResult, check_setup, run_group, run_setup
from engine.actors.sandbox.run import run_sandboxed
from engine.actors.sandbox.shared import SharedServices, start_shared_services
from engine.actors.targets.argv import build_argv, env_name, env_value
from engine.actors.targets.interpreter_script import relative_script, script_element
from engine.actors.targets.target_protocol import (
    TargetContext,
    TargetError,
    TargetRequest,
    TargetResponse,
    env_secret,
)
from engine.actors.targets.transcript import read_transcript
from engine.actors.targets.workspace import SHARED, Key
from engine.events.spec import CommandTargetSpec

__all__ = ["CommandTarget", "build_argv", "env_name", "env_value", "trial_env", "run_setup"]


class CommandTarget:
    @classmethod
    def from_spec(cls, spec: CommandTargetSpec, context: TargetContext) -> CommandTarget:
        return cls(anchor_paths(spec, context.base_dir), context.base_dir)

    def __init__(self, spec: CommandTargetSpec, base_dir: Path | None = None) -> None:
        self.spec = spec
        self.base_dir = base_dir
        self._shared: dict[Key, Path] = {}  # the shared workspaces this target holds until it closes

    async def call(self, request: TargetRequest) -> TargetResponse:
        argv, stdin = build_argv(self.spec, request)
        policy = self.spec.policy
        # in a sandbox, only what the spec names (bwrap's sandbox_env adds PATH, HOME and pass_env)
        env = trial_env(self.spec, request, {} if policy.sandboxed else os.environ)
        fresh = self.spec.workdir is None and self.spec.workspace == "per_trial"
        scratch = Path(tempfile.mkdtemp(prefix="engine-trial-"))
        # the agent's own reports live beside its workspace, not in it: a grader that runs in the
        # workspace sees the agent's files only
        own = Path(tempfile.mkdtemp(prefix="engine-reports-"))
        env["ENGINE_METRICS_FILE"] = str(own / "engine-metrics.json")
        env["ENGINE_TRANSCRIPT"] = str(own / "engine-transcript.jsonl")
        handed = False  # the per-trial workspace went to the grader with the response
        try:
            workdir = await self._workdir(request, env, scratch)
            if fresh:  # a fixed workdir would see every trial's setup at once
                await self._setup(request.variant.setup, workdir, env, scratch, request.timeout_s)
            service_logs: dict[str, str] = {}
            if policy.sandboxed:
                shared = self._shared_services(request)
                bare = replace(policy, services=[]) if shared is not None else policy  # started once, there
                ran = await run_sandboxed(
                    bare, argv, cwd=workdir, named_env=env, timeout_s=request.timeout_s, stdin=stdin,
                    writable=[scratch, own], readable=self._readable(), shared=shared,
                )  # fmt: skip
                done, service_logs = ran.result, ran.service_logs
            else:
                done = await run_group(argv, cwd=workdir, env=env, timeout_s=request.timeout_s, stdin=stdin)
            reported = read_metrics(own / "engine-metrics.json")
            transcript, tools = read_transcript(own / "engine-transcript.jsonl")
            response = self._response(request, done, reported, transcript, tools, service_logs)
            if request.keep_workspace:
                handed = workdir == scratch
                response.workspace, response.workspace_owned = str(workdir), handed
            return response
        finally:
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(shutil.rmtree, own, True)
                if not handed:
                    await trio.to_thread.run_sync(shutil.rmtree, scratch, True)

    def _response(
        self, request: TargetRequest, done: ProcessResult, reported: dict[str, float], transcript: str,
        tools: dict[str, int], service_logs: dict[str, str],
    ) -> TargetResponse:  # fmt: skip
        if done.timed_out:
            raise TargetError("timeout", f"{self.spec.command!r:.200} timed out after {request.timeout_s}s")
        if done.exit_code in AGENT_NOT_STARTED:
            # 126 (not executable) and 127 (not found), from a shell or an exec wrapper: the agent never
            # ran, so no grader (not even a verifier or an exit_code gate) may grade it as a fail
            missing = f"agent did not start (exit {done.exit_code}):\n{done.stderr_tail()}"
            raise TargetError("config", missing, error_class="agent_start", agent_exit_code=done.exit_code)
        if done.exit_code and not request.accept_nonzero_exit:
            tail = done.stderr_tail(5)
            raise TargetError(
                "model", f"agent exited with {done.exit_code}" + (f": {tail}" if tail else ""),
                error_class="agent_exit", agent_exit_code=done.exit_code,
            )  # fmt: skip
        text = done.stdout.decode("utf-8", errors="replace")
        if tools and "tool_calls" not in reported:  # the transcript speaks for an agent that did not count
            reported["tool_calls"] = float(sum(tools.values()))
        return TargetResponse(
            text=text,
            # an agent that reports its tokens and cost is believed; otherwise words stand in for tokens
            tokens_in=int(reported.pop("tokens_in", len(request.prompt.split()))),
            tokens_out=int(reported.pop("tokens_out", len(text.split()))),
            cost_usd=float(reported.pop("cost_usd", 0.0)),
            exit_code=done.exit_code,
            stderr=done.stderr[-STDERR_KEEP:].decode("utf-8", errors="replace"),
            metrics=reported,
            transcript=transcript,
            tools=tools,
            service_logs=service_logs,
        )

    def _readable(self) -> list[Path]:
        """What a sandboxed agent may read beyond the system: the experiment's folder (its scripts)."""
        return [self.base_dir] if self.base_dir is not None else []

    async def _setup(
        self, commands: list[str], workdir: Path, env: dict[str, str], scratch: Path, timeout_s: float
    ) -> None:
        """The variant's setup commands, in the agent's sandbox when it has one (without its services)."""
        policy = self.spec.policy
        if not policy.sandboxed:
            await run_setup(commands, workdir, env, timeout_s)
            return
        bare = msgspec.structs.replace(policy, services=[], host_ports=[])
        for command in commands:
            ran = await run_sandboxed(
                bare, ["/bin/sh", "-c", command], cwd=workdir, named_env=env, timeout_s=timeout_s,
                writable=[scratch], readable=self._readable(),
            )  # fmt: skip
            check_setup(command, ran.result, timeout_s)

    async def _workdir(self, request: TargetRequest, env: dict[str, str], scratch: Path) -> Path:
        if self.spec.workdir is not None:
            return Path(self.spec.workdir)
        if self.spec.workspace == "per_trial":
            return scratch
        key = (request.run_id, request.variant.name)
        if key not in self._shared:

            async def setup(folder: Path) -> SharedServices | None:
                await self._setup(request.variant.setup, folder, env, scratch, request.timeout_s)
                if not self.spec.services:
                    return None
                return await start_shared_services(self.spec.policy, folder, env, self._readable())

            self._shared[key] = await SHARED.acquire(key, setup)
        return self._shared[key]

    def _shared_services(self, request: TargetRequest) -> SharedServices | None:
        """The services of the variant's shared workspace (started by its setup), if it has any."""
        if self.spec.workspace != "shared" or self.spec.workdir is not None:
            return None
        found = SHARED.attached((request.run_id, request.variant.name))
        return found if isinstance(found, SharedServices) else None

    async def aclose(self) -> None:
        with trio.CancelScope(shield=True):
            for key in list(self._shared):
                del self._shared[key]
                await SHARED.release(key)


def anchor_paths(spec: CommandTargetSpec, base_dir: Path | None) -> CommandTargetSpec:
    """A relative agent binary (`./agent.sh`, `bin/agent`) and workdir resolve against the experiment
    file's folder: a trial runs in its own temp directory, where `./agent.sh` does not exist. A bare
    name (`python`) is still looked up on PATH."""
    if base_dir is None:
        return spec
    command = anchor_command(spec.command, base_dir)
    if spec.workdir is None:  # in a fixed workdir the agent's cwd is that folder: its scripts are there
        command = anchor_script(command, base_dir)
    workdir = spec.workdir
    if workdir is not None and not Path(workdir).is_absolute():
        workdir = str(base_dir / workdir)
    # a service's `./bin/api` too: it starts in the trial's workspace, as the agent does
    services = [replace(s, command=anchor_command(s.command, base_dir)) for s in spec.services]
    return replace(spec, command=command, workdir=workdir, services=services)


def anchor_command(command: list[str] | str, base_dir: Path) -> list[str] | str:
    """The command with a relative agent binary made absolute under base_dir (argv or shell string)."""
    if isinstance(command, list) and command and _relative_path(command[0]):
        return [str(base_dir / command[0]), *command[1:]]
    if isinstance(command, str):
        head, sep, rest = command.lstrip().partition(" ")
        if _relative_path(head):
            return shlex.quote(str(base_dir / head)) + sep + rest
    return command


def anchor_script(command: list[str] | str, base_dir: Path) -> list[str] | str:
    """`python3 fleet_agent.py` with the script beside the experiment file: the script made absolute,
    as a relative binary is. One that is not there is left alone (a setup step may create it in the
    trial's workspace; preflight refuses it otherwise)."""
    index = script_element(command) if isinstance(command, list) else None
    if index is None or not relative_script(command[index]) or not (base_dir / command[index]).is_file():
        return command
    return [*command[:index], str(base_dir / command[index]), *command[index + 1 :]]


def _relative_path(word: str) -> bool:
    """`./x`, `../x`, `bin/x`: a path, not a name for PATH; and no shell syntax or placeholder."""
    return "/" in word and not word.startswith(("/", "~", "$", "{")) and not any(c in word for c in "'\"`;|&")


AGENT_NOT_STARTED = (126, 127)  # the POSIX shell's "found but not executable" and "not found"
STDERR_KEEP = 64 << 10  # the tail of an agent's stderr kept per trial


MAX_METRIC = 1e15  # beyond any real token count or bill: a larger figure is a broken report


def read_metrics(path: Path) -> dict[str, float]:
    """ENGINE_METRICS_FILE: a JSON object of numbers an agent may write (tokens_in, tokens_out,
    cost_usd, tool_calls...). Non-numeric entries are ignored: it is the agent's own report. A
    non-finite, negative or absurd figure is a bad_metrics error, not a crash of the run."""
    try:
        data = msgspec.json.decode(path.read_bytes())
    except OSError:
        return {}
    except msgspec.DecodeError as exc:
        message = f"bad metrics: {path.name} is not JSON ({exc})"
        raise TargetError("model", message, error_class="bad_metrics") from None
    if not isinstance(data, dict):
        return {}
    numbers = {
        str(k): float(v) for k, v in data.items() if isinstance(v, int | float) and not isinstance(v, bool)
    }
    for name, value in numbers.items():
        if not math.isfinite(value) or (name in _SPEND and not 0 <= value <= MAX_METRIC):
            raise TargetError("model", f"bad metrics: {name} = {value!r}", error_class="bad_metrics")
    return numbers


# Linux refuses to start a process with one environment string over 128 KiB (MAX_ARG_STRLEN): a longer
# prompt reaches the agent through stdin or an argument only
PROMPT_ENV_LIMIT = 32 * 1024

_SPEND = ("tokens_in", "tokens_out", "cost_usd")  # what budgets count: must be real amounts


def trial_env(
    spec: CommandTargetSpec, request: TargetRequest, base: Mapping[str, str] = os.environ
) -> dict[str, str]:
    """The agent's environment: `base` (the host's; nothing in a sandbox), the spec's `env` (a
    `{ env = "VAR" }` read now), the trial's ENGINE_* variables."""
    own = {name: value if isinstance(value, str) else env_secret(value, f"env {name}")
           for name, value in spec.env.items()}  # fmt: skip
    return {**base, **own, **engine_variables(request)}


def engine_variables(request: TargetRequest) -> dict[str, str]:
    """The ENGINE_* variables a trial's agent is given (its request fingerprint holds them too)."""
    env = dict(
        ENGINE_VARIANT=request.variant.name, ENGINE_CASE_ID=request.case.id,
        ENGINE_REPEAT=str(request.repeat), ENGINE_SEED=str(request.seed),
        ENGINE_MODEL=request.model or "", ENGINE_SYSTEM=request.system or "",
    )  # fmt: skip
    if len(request.prompt) <= PROMPT_ENV_LIMIT:  # read by a script instead of a placeholder in its code
        env["ENGINE_PROMPT"] = request.prompt
    for prefix, values in (("ENGINE_FLAG_", request.flags), ("ENGINE_PARAM_", request.params)):
        for name, value in values.items():
            env[prefix + env_name(name)] = env_value(value)
    return env
