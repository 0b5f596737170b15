"""The verifier grader: shell commands judge the output; exit 0 means the check passed.

The output is written to output.txt in a fresh temp dir that is also the
commands' working directory, so a verifier can be as small as
`grep -q Paris output.txt` or as large as a test suite run against it.
With `workspace` (AgentV's scripts) the commands run in the trial's workspace
instead, where the agent's files are: a script checks what the agent built.
That workspace exists only right after the trial: a regrade cannot run them.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import msgspec
import trio

from engine.actors.graders.grader_protocol import SpecGrader, Submission, result
from engine.actors.process import run_group
from engine.actors.sandbox.run import run_sandboxed
from engine.actors.targets.target_protocol import TargetError
from engine.events.kinds import GraderResult
from engine.events.spec import CaseSpec, CommandGraderSpec


class CommandGrader(SpecGrader):
    spec: CommandGraderSpec

    async def grade(self, submission: Submission) -> GraderResult:
        case, output = submission.case, submission.output
        # the grader's commands, then the case's own (criteria.commands)
        commands = [*self.spec.commands, *case_commands(case)]
        if not commands:
            return result(self.spec, None, False, "no commands")
        in_workspace = self.spec.workspace and submission.exit_code is not None  # a command agent has one
        if in_workspace and not (submission.workspace and os.path.isdir(submission.workspace)):
            gone = "the trial's workspace is gone (its scripts run right after the trial, not on a regrade)"
            return result(self.spec, None, False, gone)
        workdir = Path(tempfile.mkdtemp(prefix="engine-grade-"))
        try:
            output_file = workdir / "output.txt"
            output_file.write_text(output, encoding="utf-8")
            base = {} if self.spec.policy.sandboxed else os.environ  # a sandbox sees only what is named
            env = {**base, **verifier_env(self.spec, case, output_file)}
            if submission.exit_code is not None:  # a command agent's: a verifier may judge it too
                env["ENGINE_AGENT_EXIT_CODE"] = str(submission.exit_code)
            where = Path(submission.workspace) if in_workspace else workdir
            if in_workspace and submission.workspace_owned and not (where / "output.txt").exists():
                (where / "output.txt").write_text(output, encoding="utf-8")  # as in the grading folder
            failures = [await self._check(command, where, env) for command in commands]
        finally:
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(shutil.rmtree, workdir, True)
        failed = [reason for reason in failures if reason]
        score = 1.0 - len(failed) / len(failures)
        return result(self.spec, score, not failed, failed[0] if failed else "")

    async def _check(self, command: str, workdir: Path, env: dict[str, str]) -> str:
        """Run one command; "" when it exited 0, else why it failed (the first one becomes the reason)."""
        timeout_s, argv, policy = self.spec.timeout_s, ["/bin/sh", "-c", command], self.spec.policy
        try:
            if policy.sandboxed:
                ran = await run_sandboxed(policy, argv, cwd=workdir, named_env=env, timeout_s=timeout_s)
                done = ran.result
            else:
                done = await run_group(argv, cwd=workdir, env=env, timeout_s=timeout_s)
        except TargetError as exc:  # /bin/sh (or its sandbox) could not start: a failed check, not a crash
            return f"{command!r}: {exc.message}"
        if done.timed_out:
            return f"{command!r} timed out after {timeout_s}s"
        if done.exit_code == 0:
            return ""
        tail = done.stderr_tail(5)
        return f"{command!r} exited with {done.exit_code}" + (f": {tail}" if tail else "")


def case_commands(case: CaseSpec) -> list[str]:
    commands = case.criteria.get("commands", [])
    return [commands] if isinstance(commands, str) else [str(c) for c in commands]


def verifier_env(spec: CommandGraderSpec, case: CaseSpec, output_file: Path) -> dict[str, str]:
    # the grader's own `value` wins, as for the other graders; JSON keeps lists and numbers parseable
    expected = spec.value if spec.value is not None else case.expected
    encoded = expected if isinstance(expected, str) else msgspec.json.encode(expected).decode()
    return {"ENGINE_OUTPUT_FILE": str(output_file), "ENGINE_EXPECTED": encoded, "ENGINE_CASE_ID": case.id}
