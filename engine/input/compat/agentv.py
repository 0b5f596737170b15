"""AgentV / Vercel wire shapes, rewritten into engine's own before validation.

Accepted, so an AgentV experiment file loads as it is:
- `suites: [{ref: GLOB, select: {test_ids: [GLOB...]}}]`: several suite files, globbed;
- `runs: N` (+ `early_exit`): shorthand for a pass_at_k repeat; not together with `repeat`;
- `repeat.costLimitUsd`: the prerelease spelling of `repeat.cost_limit_usd`;
- `timeout_seconds`: the per-trial timeout (`execution.trial_timeout_s`);
- `setup: [{script: CMD}]`: commands run in each trial's workspace before the agent (the files they
  name are copied in from the experiment's folder first: see agentv_setup);
- `scripts: [CMD | {script: CMD, timeout_seconds: S}]`: verification scripts run after each trial in
  its workspace, beside the agent's files (a bare name is a package script: agentv_scripts),
  one `command` grader that is a gate (every script must exit 0) added to the expected-output check,
  which stays: without graders of its own, an AgentV file checks each test's `expected_output` (and
  its assertions) with a `case` grader, also a gate, so a wrong answer fails even when scripts pass.

A `kind = "tune"` session without `tune.parameters` gets the default search space
(temperature, top_p, top_k and the two penalties).

"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.errors import InputError
from engine.events.spec import DEFAULT_SEARCH_SPACE
from engine.input.compat.agentv_project import project_dir
from engine.input.compat.agentv_scripts import package_script
from engine.input.compat.agentv_setup import per_trial_setup, with_package
from engine.input.compat.common import list_of, table_of


def normalize_agentv(
    out: dict[str, Any], file: str, base_dir: Path | None = None, agentv: bool = False
) -> dict[str, Any]:
    """`out` with the AgentV spellings replaced by engine's; engine's own pass through."""
    _default_search_space(out, file)
    _runs_shorthand(out, file)
    _repeat_aliases(out)
    works = agentv and ("setup" in out or "scripts" in out)  # in each trial's workspace
    if "timeout_seconds" in out:
        execution = dict(table_of(out.get("execution", {}), file, "execution"))
        execution.setdefault("trial_timeout_s", out.pop("timeout_seconds"))
        out["execution"] = execution
    if "setup" in out:
        _setup(out, file, base_dir, agentv)
    if agentv:
        _expected_check(out, file)
    if "scripts" in out:
        folders = _folders(base_dir) if agentv else None
        out["graders"] = [*out.get("graders", []), _scripts_grader(out.pop("scripts"), file, folders)]
    if works and base_dir is not None:
        with_package(out, _folders(base_dir))
    if "suite" in out:
        out["suite"] = _suite(out["suite"], file, "suite")
    if "suites" in out:
        suites = list_of(out["suites"], file, "suites")
        out["suites"] = [_suite(item, file, f"suites[{i}]") for i, item in enumerate(suites)]
    return out


def _setup(out: dict[str, Any], file: str, base_dir: Path | None, agentv: bool) -> None:
    commands = _scripts(out.pop("setup"), file, "setup")[0]
    if not agentv:
        out["setup"] = commands  # engine's own: once per start, in the experiment's folder
        return
    target = out.get("target")
    if isinstance(target, dict) and target.get("workdir") is not None:
        expected = "runs in each trial's own workspace: not together with the target's fixed `workdir`"
        raise InputError(file, "setup", expected)
    per_trial_setup(out, commands, _folders(base_dir))


def _folders(base_dir: Path | None) -> list[Path]:
    if base_dir is None:
        return []
    root = project_dir(base_dir)
    return [base_dir] if root is None or root == base_dir.resolve() else [base_dir, root]


def _expected_check(out: dict[str, Any], file: str) -> None:
    """No graders of the file's own: each test's expected_output and assertions are the check."""
    graders = list_of(out.get("graders", []), file, "graders")
    if all(isinstance(g, dict) and g.get("kind") == "forbidden" for g in graders):
        check = {"kind": "case", "name": "expected_output", "expected": True, "gate": True}
        out["graders"] = [check, *graders]


def _default_search_space(out: dict[str, Any], file: str) -> None:
    """As Zeph does, a tuning session that names no parameters searches the five sampling parameters,
    those the target sends (an Anthropic target has no penalties)."""
    from engine.events.targets import TARGETS

    if out.get("kind") != "tune":
        return
    tune = dict(table_of(out.get("tune", {}), file, "tune"))
    if "parameters" not in tune:
        target = out.get("target")
        kind = str(target.get("kind", "")) if isinstance(target, dict) else "local"  # the embedded default
        found = TARGETS.get(kind)
        sent = found.sent_params if found is not None else None
        tune["parameters"] = [dict(p) for p in DEFAULT_SEARCH_SPACE if sent is None or p["name"] in sent]
    out["tune"] = tune


def _runs_shorthand(out: dict[str, Any], file: str) -> None:
    if "runs" not in out:
        if "early_exit" in out:
            raise InputError(file, "early_exit", "goes with `runs` (or use repeat.early_exit)")
        return
    if "repeat" in out:
        raise InputError(file, "runs", "not together with `repeat`: use one of them")
    early_exit = out.pop("early_exit", True)
    out["repeat"] = {"count": out.pop("runs"), "strategy": "pass_at_k", "early_exit": early_exit}


def _repeat_aliases(out: dict[str, Any]) -> None:
    repeat = out.get("repeat")
    if isinstance(repeat, dict) and "costLimitUsd" in repeat:
        repeat = dict(repeat)
        repeat.setdefault("cost_limit_usd", repeat.pop("costLimitUsd"))
        out["repeat"] = repeat


def _scripts(items: Any, file: str, field: str) -> tuple[list[Any], float | None]:
    """Commands from a list of strings or {script, timeout_seconds} tables, and the largest timeout."""
    if not isinstance(items, list):
        raise InputError(file, field, "expected a list of commands")
    commands: list[Any] = []
    timeout: float | None = None
    for i, item in enumerate(items):
        if isinstance(item, dict):
            if "script" not in item:
                raise InputError(file, f"{field}[{i}]", "expected a command string or a table with `script`")
            seconds = item.get("timeout_seconds")
            if seconds is not None:
                if not isinstance(seconds, int | float) or isinstance(seconds, bool) or seconds <= 0:
                    raise InputError(file, f"{field}[{i}].timeout_seconds", "expected a positive number")
                timeout = max(timeout or 0.0, float(seconds))
            item = item["script"]
        commands.append(item)
    return commands, timeout


def _scripts_grader(items: Any, file: str, folders: list[Path] | None) -> dict[str, Any]:
    """AgentV's (`folders`: where its package.json may be): bare names are package scripts, and the
    scripts run in the trial's workspace, beside the agent's files."""
    commands, timeout = _scripts(items, file, "scripts")
    grader: dict[str, Any] = {"kind": "command", "name": "scripts", "commands": commands, "gate": True}
    if folders is not None:
        grader["commands"] = [
            package_script(c, folders or [Path(".")], file, f"scripts[{i}]") if isinstance(c, str) else c
            for i, c in enumerate(commands)
        ]
        grader["workspace"] = True
    if timeout is not None:
        grader["timeout_s"] = timeout
    return grader


def _suite(item: Any, file: str, field: str) -> Any:
    if not isinstance(item, dict):
        return item  # the spec's validation names what was expected
    suite = dict(item)
    if "ref" in suite:
        suite.setdefault("path", suite.pop("ref"))
    select = suite.get("select")
    if isinstance(select, dict):
        if set(select) - {"test_ids"}:
            raise InputError(file, f"{field}.select", "expected a list of id globs or {test_ids = [...]}")
        suite["select"] = select.get("test_ids", [])
    return suite
