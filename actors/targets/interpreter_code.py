"""Placeholders inside code an interpreter runs: refused, wherever the argv list puts them.

An argv element is inert text to the program that receives it, unless that program runs it as code:
`sh -c SCRIPT`, `bash -lc SCRIPT`, `python3 -c CODE`, `node -e CODE`, `perl -ne CODE`, an awk program.
A prompt substituted there is code, whatever quotes the author wrote around it (`echo "{prompt}"`
runs `$(...)`, `print('{prompt}')` ends at the prompt's first quote). The value goes in its own
argv element instead (`["sh", "-c", "echo \"$1\"", "_", "{prompt}"]`) or through the environment
(`$ENGINE_PROMPT`), where no interpreter parses it. A script that `eval`s a positional parameter
filled by a placeholder is refused too: eval makes the argument code again.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import PurePath
from typing import NamedTuple

Finder = Callable[[str], list[str]]  # the placeholders one argv element holds

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "busybox"})
_SHELL_VALUE_OPTIONS = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
# interpreters whose code follows a flag. Per family: the short letters that take code (clustered
# `-lne` ends in one; `-cCODE` carries it attached), the letters that take a value (the rest of the
# element, or the next one: `-W error`, `-Mstrict`), the letters after which nothing is code (`-m mod`),
# and the long forms that take code or a value
class Flags(NamedTuple):
    code: str
    value: str = ""
    stop: str = ""
    code_long: tuple[str, ...] = ()
    value_long: tuple[str, ...] = ()


_JS = Flags("ep", "r", code_long=("--eval", "--print"), value_long=("--require", "--import", "--loader"))
_CODE_FLAGS: dict[str, Flags] = {
    "python": Flags("c", "WX", "m"), "pypy": Flags("c", "WX", "m"),
    "node": _JS, "nodejs": _JS, "bun": _JS, "deno": Flags("", code_long=("eval",)),
    "perl": Flags("eE", "MmIxCdDiF"), "ruby": Flags("e", "rIECFTxKW"),
    "php": Flags("r", "dcz"), "lua": Flags("e", "l"), "osascript": Flags("e", "l"),
}  # fmt: skip
_AWKS = frozenset({"awk", "gawk", "mawk", "nawk"})
_WRAPPERS = frozenset({"env", "nice", "nohup", "stdbuf", "time", "timeout", "exec", "command"})
_EVAL_OF_ARGUMENT = re.compile(r"\beval\b[^\n;|&]*\$(\{?[1-9@*]|\{?\d)")


def interpreter_name(program: str) -> str:
    """`/usr/bin/python3.11` -> "python", `nodejs` -> "nodejs": the family its flags belong to."""
    name = PurePath(program).name
    return re.sub(r"[\d.]+$", "", name)


def code_elements(command: list[str]) -> Iterator[int]:
    """Indices of the argv elements that an interpreter in `command` runs as code."""
    start = _after_wrappers(command)
    if start >= len(command):
        return
    name, args = interpreter_name(command[start]), range(start + 1, len(command))
    if name in SHELLS:
        yield from _shell_code(command, args)
    elif name in _AWKS:
        yield from _awk_program(command, args)
    elif name in _CODE_FLAGS:
        yield from _flagged_code(command, args, _CODE_FLAGS[name])


def code_placeholders(command: list[str], find: Finder) -> list[tuple[int, list[str]]]:
    """(index, placeholders) of every code element holding one, and of shell scripts that eval a
    positional parameter a placeholder fills."""
    found = []
    for index in code_elements(command):
        inside = find(command[index])
        if not inside and _evals_a_filled_argument(command, index, find):
            inside = [p for word in command[index + 1 :] for p in find(word)]
        if inside:
            found.append((index, list(dict.fromkeys(inside))))
    return found


def refusal(command: list[str], index: int, placeholders: list[str]) -> str:
    program = PurePath(command[_after_wrappers(command)]).name
    names = ", ".join(placeholders)
    return (
        f"expected no placeholder ({names}) inside code that {program} runs (a value pasted into code "
        f'can run as code): pass it as its own argument, e.g. ["sh", "-c", "echo \\"$1\\"", "_", '
        f'"{placeholders[0]}"], or read it from the environment ($ENGINE_PROMPT for the prompt)'
    )


def _after_wrappers(command: list[str]) -> int:
    """Skip `env A=1 timeout 10 nice -n 5 ...`: the program that really runs."""
    i = 0
    while i < len(command) and PurePath(command[i]).name in _WRAPPERS:
        i += 1
        while i < len(command) and (command[i].startswith("-") or "=" in command[i].split("/")[0]):
            i += 2 if command[i] in ("-n", "-u", "-s", "-k", "-i", "-o", "-e") else 1
        if i < len(command) and re.fullmatch(r"[\d.]+[smhd]?", command[i]):  # timeout's duration
            i += 1
    return i


def _shell_code(command: list[str], args: range) -> Iterator[int]:
    code_flag, skip = False, False
    for i in args:
        word = command[i]
        if skip:
            skip = False
        elif word in _SHELL_VALUE_OPTIONS:
            skip = True
        elif word == "--":
            continue
        elif len(word) > 1 and word[0] in "-+" and not word.startswith("--"):
            code_flag = code_flag or "c" in word[1:]
        elif not word.startswith("--"):
            if code_flag:
                yield i  # the first operand after -c is the script; the rest are $0, $1...
            return


def _awk_program(command: list[str], args: range) -> Iterator[int]:
    skip = False
    for i in args:
        word = command[i]
        if skip:
            skip = False
        elif word in ("-f", "--file"):
            return  # the program is a file
        elif word in ("-v", "-F"):
            skip = True
        elif not word.startswith("-"):
            yield i
            return


def _flagged_code(command: list[str], args: range, flags: Flags) -> Iterator[int]:
    skip = False
    for i in args:
        word = command[i]
        if skip:
            skip = False
        elif word in flags.code_long or word in flags.value_long:
            if word in flags.code_long and i + 1 < len(command):
                yield i + 1
            skip = True
        elif any(word.startswith(f"{flag}=") for flag in flags.code_long):
            yield i
        elif len(word) > 1 and word[0] == "-" and word[1] != "-":
            taken = _short_cluster(word, flags)
            if taken == "stop":
                return
            if taken == "code":
                code_at = i if _attached(word, flags.code) else i + 1
                if code_at < len(command):
                    yield code_at
                return
            skip = taken == "value-next"
        elif not word.startswith("-"):
            return  # a script file: what follows is its arguments


def _short_cluster(word: str, flags: Flags) -> str:
    """What a cluster of short options takes: "code", a value ("value" attached, "value-next"),
    "stop", or nothing ("")."""
    for at, letter in enumerate(word[1:], 1):
        if letter in flags.code:
            return "code"
        if letter in flags.stop:
            return "stop"
        if letter in flags.value:
            return "value" if at + 1 < len(word) else "value-next"
    return ""


def _attached(word: str, letters: str) -> bool:
    at = next(j for j, c in enumerate(word[1:], 1) if c in letters)
    return at + 1 < len(word)


def _evals_a_filled_argument(command: list[str], index: int, find: Finder) -> bool:
    script = command[index]
    return bool(_EVAL_OF_ARGUMENT.search(script)) and any(find(word) for word in command[index + 1 :])
