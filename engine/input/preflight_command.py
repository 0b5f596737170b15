"""Before the first event: an agent CLI a run could not start is a clear error (exit 2), not a run
whose every trial fails with a config error.

Each variant's command is built as its first trial would build it: a `{{ matrix.key }}` (or params,
flags) placeholder the variant has no value for is named, and the agent binary must exist (a path:
a file that may be executed; a bare name: on PATH). On a Ray cluster the binary lives on the
workers, so only the placeholders are checked here.
"""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path
from typing import cast

from engine.actors.sandbox.bwrap import SANDBOX_PATH, visible_in_sandbox
from engine.actors.targets.command_target import anchor_paths, build_argv
from engine.actors.targets.interpreter_script import script_element
from engine.actors.targets.target_protocol import TargetError, TargetRequest
from engine.errors import InputError
from engine.events.spec import CommandTargetSpec
from engine.events.targets import TARGETS
from engine.input.experiment_plan import ExperimentPlan


def check_commands(plan: ExperimentPlan) -> None:
    spec, file, base_dir = plan.spec, plan.file, plan.base_dir
    variants = plan.contestants if spec.cases else ()
    for i, variant in enumerate(variants):
        if not TARGETS.of(plan.targets[variant.name]).runs_command:
            continue
        target = cast(CommandTargetSpec, plan.targets[variant.name])  # its kind holds it to one
        own = variant.target and "command" in variant.target  # the variant names its own agent
        field = f"{plan.origins[i]}.target.command" if own else "target.command"
        case = spec.cases[0]
        request = TargetRequest(
            run_id="preflight", variant=variant, case=case, repeat=0, prompt=case.prompt,
            system=variant.system, model=target.model, params={**spec.params, **variant.params},
            flags=dict(variant.flags),
        )  # fmt: skip
        anchored = anchor_paths(target, base_dir)
        try:
            argv, _ = build_argv(anchored, request)
        except TargetError as exc:
            raise InputError(file, field, f"expected every placeholder filled: {exc.message}") from None
        if spec.execution.backend != "ray":
            _check_binary(target, argv, file, field, base_dir)
            if not variant.setup:  # a setup step may create the script in the trial's workspace
                _check_script(argv, anchored.workdir, file, field)
    if not variants and TARGETS.of(spec.target).runs_command and spec.execution.backend != "ray":
        target = cast(CommandTargetSpec, spec.target)
        anchored = anchor_paths(target, base_dir)
        command = anchored.command
        _check_binary(target, command if isinstance(command, list) else ["/bin/sh", "-c", command],
                      file, "target.command", base_dir)  # fmt: skip
        if isinstance(command, list) and not any(v.setup for v in plan.variants):
            _check_script(command, anchored.workdir, file, "target.command")


def _check_binary(
    target: CommandTargetSpec, argv: list[str], file: str, field: str, base_dir: Path | None = None
) -> None:
    program = _program(argv)
    if program is None or "{" in program:  # a shell's own words, or a placeholder left for the trial
        return
    if "/" in program:
        if not (os.path.isfile(program) and os.access(program, os.X_OK)):
            expected = f"expected an executable agent at {program} (not found or not executable)"
            raise InputError(file, field, expected)
        found: str | None = program
    else:
        default = SANDBOX_PATH if target.policy.sandboxed else os.environ.get("PATH", "")
        path = target.env.get("PATH", default)
        found = shutil.which(program, path=path)
        if found is None:
            where = "the sandbox's PATH" if target.policy.sandboxed else "PATH"
            raise InputError(file, field, f"expected the agent {program!r} on {where} (not found)")
    if target.policy.sandboxed and not visible_in_sandbox(Path(found), base_dir):
        hidden = "the homes, /run, /var/tmp"
        expected = f"expected the agent outside the folders a sandbox hides ({hidden}): {found} is not there "
        expected += "inside it (install it under /usr/local or /opt, or in the experiment's folder)"
        raise InputError(file, field, expected)


def _check_script(argv: list[str], workdir: str | None, file: str, field: str) -> None:
    """The script an interpreter runs must exist: relative ones were resolved against the experiment
    file's folder (or run in the fixed workdir), so one still relative here was not found there."""
    index = script_element(argv)
    if index is None:
        return
    script = Path(argv[index])
    where = script if script.is_absolute() or workdir is None else Path(workdir) / script
    if not where.is_file():
        in_workdir = workdir is not None and not script.is_absolute()
        folder = "its workdir" if in_workdir else "the experiment's folder"
        raise InputError(file, field, f"expected the agent's script {argv[index]!r} in {folder} (not found)")


def _program(argv: list[str]) -> str | None:
    """The program a command starts: argv[0], or a shell command's first word when it is a path."""
    if argv[:2] != ["/bin/sh", "-c"]:
        return argv[0] if argv else None
    try:
        words = [w for w in shlex.split(argv[2]) if "=" not in w.split("/")[0]]  # skip VAR=value
    except ValueError:
        return None
    return words[0] if words and "/" in words[0] else None  # a bare word may be a shell builtin
