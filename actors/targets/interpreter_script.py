"""The script file an interpreter in an argv list runs: `python3 fleet_agent.py`, `node -r x agent.js`,
`bash run.sh`, `deno run --allow-read agent.ts`, `bun agent.ts`.

A trial runs in its own temp directory, so a relative script beside the experiment file would not be
found there ("can't open file", exit 2 or 1): the script is resolved against the experiment file's
folder as a relative agent binary is, and preflight refuses one that does not exist. Code given
inline (`-c`, `-e`, `-m module`) is no script; `bun run NAME` without a file suffix is a package
script, not a file.
"""

from __future__ import annotations

from pathlib import PurePath

from engine.actors.targets.interpreter_code import (
    _CODE_FLAGS,
    _SHELL_VALUE_OPTIONS,
    SHELLS,
    _after_wrappers,
    _short_cluster,
    interpreter_name,
)

_SUBCOMMANDS = {"deno": ("run",), "bun": ("run",)}  # a subcommand before the script
_FILE_ONLY = frozenset({"bun", "deno"})  # their bare words may be package scripts or tasks


def script_element(command: list[str]) -> int | None:
    """The index of the script file an interpreter in `command` runs, or None (no interpreter,
    inline code, a module, a placeholder)."""
    start = _after_wrappers(command)
    if start >= len(command):
        return None
    name = interpreter_name(command[start])
    if name not in SHELLS and name not in _CODE_FLAGS:
        return None
    index = _first_operand(command, start + 1, name)
    if index is None or "{" in command[index]:
        return None
    if name in _FILE_ONLY and "." not in PurePath(command[index]).name and "/" not in command[index]:
        return None
    return index


def relative_script(word: str) -> bool:
    """A script path to resolve against a folder: not absolute, not home- or variable-relative."""
    return bool(word) and not word.startswith(("/", "~", "$")) and not any(c in word for c in "'\"`;|&")


def _first_operand(command: list[str], begin: int, name: str) -> int | None:
    flags = _CODE_FLAGS.get(name)
    skip = False
    for i in range(begin, len(command)):
        word = command[i]
        if skip:
            skip = False
        elif word in _SUBCOMMANDS.get(name, ()) and i == begin:
            continue
        elif word == "--":
            continue
        elif name in SHELLS:
            if word in _SHELL_VALUE_OPTIONS:
                skip = True
            elif word[:1] in "-+" and len(word) > 1:
                if not word.startswith("--") and "c" in word[1:]:
                    return None  # `sh -c CODE`: inline code
            else:
                return i
        elif flags is not None and word in flags.code_long:
            return None
        elif flags is not None and word in flags.value_long:
            skip = True
        elif flags is not None and word.startswith("-") and len(word) > 1:
            if word.startswith("--"):
                continue  # `--allow-read=.`, `--inspect`: a long option without a separate value
            taken = _short_cluster(word, flags)
            if taken in ("code", "stop"):
                return None
            skip = taken == "value-next"
        else:
            return i
    return None
