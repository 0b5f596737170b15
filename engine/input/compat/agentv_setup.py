"""AgentV's `setup:` runs in each trial's workspace, where the agent then works.

The workspace starts empty, so `cp skills/with-docs/AGENTS.md AGENTS.md` would find nothing there:
every relative path a setup command names that exists in the experiment's folder (or the AgentV
project's) is copied into the workspace first, at the same relative place. Only what the commands
name is copied (a variant without the docs must not find them beside it), and the copies are the
workspace's own: nothing a setup or an agent does changes the project.
"""

from __future__ import annotations

import shlex
from pathlib import Path, PurePosixPath
from typing import Any

SKIP = set("$*?[]{}`~=<>|&;()")  # shell syntax, globs and variables are not file names


PACKAGE_FILES = ["package.json", "bun.lockb", "bun.lock", "package-lock.json"]


def with_package(out: dict[str, Any], folders: list[Path]) -> None:
    """The project's package.json and lock file copied into each trial's workspace first: its
    package scripts (`build`, `bun test`) and `bun install` run there, beside the agent's files."""
    target = out.get("target")
    if isinstance(target, dict) and target.get("workdir") is not None:
        return  # a fixed workdir is the project itself
    _add_setup(out, stage_files(PACKAGE_FILES, folders))


def per_trial_setup(out: dict[str, Any], commands: list[str], folders: list[Path]) -> None:
    """Every variant (a declared one, each matrix entry, or the one baseline) runs the commands,
    after copying in the files they name, in its trial's workspace."""
    _add_setup(out, [*staging(commands, folders), *commands])


def _add_setup(out: dict[str, Any], steps: list[str]) -> None:
    if not steps:
        return
    if isinstance(out.get("variants"), list) and out["variants"]:
        out["variants"] = [_with_setup(v, steps) for v in out["variants"]]
    elif isinstance(out.get("matrix"), list):
        out["matrix"] = [_with_setup(entry, steps) for entry in out["matrix"]]
    elif isinstance(out.get("matrix"), dict):
        out["matrix"] = {**out["matrix"], "setup": [steps]}
    else:
        out["variants"] = [{"name": "baseline", "setup": steps}]


def _with_setup(item: Any, steps: list[str]) -> Any:
    if not isinstance(item, dict):
        return item  # the spec's validation names what was expected
    own = item.get("setup", [])
    return {**item, "setup": [*steps, *(own if isinstance(own, list) else [own])]}


def staging(commands: list[str], folders: list[Path]) -> list[str]:
    """Shell commands copying, into the current folder, the relative paths `commands` name that exist
    in one of `folders` (the first that has it); a path inside another staged one is not repeated."""
    return stage_files([word for command in commands for word in _words(command)], folders)


def stage_files(names: list[str], folders: list[Path]) -> list[str]:
    """Shell commands copying each relative path of `names` that exists in one of `folders` (the
    first that has it) into the current folder."""
    found: dict[str, Path] = {}
    for word in names:
        source = next((f / word for f in folders if (f / word).exists()), None)
        if source is not None:
            found.setdefault(str(PurePosixPath(word)), source.resolve())
    kept = sorted(found, key=lambda p: len(PurePosixPath(p).parts))
    kept = [p for p in kept if not any(PurePosixPath(p).is_relative_to(q) and p != q for q in kept)]
    return [_copy(found[path], path) for path in kept]


def _words(command: str) -> list[str]:
    try:
        words = shlex.split(command)
    except ValueError:  # unbalanced quotes: the shell will say so when it runs
        return []
    return [w for w in words[1:] if _relative_name(w)]  # words[0] is the program


def _relative_name(word: str) -> bool:
    path = PurePosixPath(word)
    return (
        bool(word) and not word.startswith("-") and not path.is_absolute() and ".." not in path.parts
        and str(path) != "." and not any(char in SKIP for char in word)
    )  # fmt: skip


def _copy(source: Path, relative: str) -> str:
    parent = str(PurePosixPath(relative).parent)
    copy = f"cp -R {shlex.quote(str(source))} {shlex.quote(relative)}"
    return copy if parent == "." else f"mkdir -p {shlex.quote(parent)} && {copy}"
