"""A command target's argv: placeholders are substituted into argv elements, never into a script.

`{{ matrix.key }}` (and params, flags) always; `{prompt}`-style names with prompt_via = "template".
A shell string holding a placeholder is refused with the argv list to write instead: a value pasted
into a script is code as soon as the author wrote it inside quotes, whatever quoting engine adds. So
is an argv element that an interpreter runs as code (`sh -c`, `python3 -c`: interpreter_code.py).
"""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

import msgspec

from engine.actors.targets.interpreter_code import code_placeholders, refusal
from engine.actors.targets.target_protocol import TargetError, TargetRequest
from engine.events.spec import CommandTargetSpec


def build_argv(spec: CommandTargetSpec, request: TargetRequest) -> tuple[list[str], bytes | None]:
    """The argv to run and the bytes for its stdin, per spec.prompt_via."""
    command, via = spec.command, spec.prompt_via
    if not command:
        raise TargetError("config", "command target: `command` is not set")
    simple = _simple_values(request) if via == "template" else {}
    if isinstance(command, str):
        if shell_placeholders(command, via):  # `validate` refuses it; an embedding caller may not have
            raise TargetError("config", f"command target: {shell_refusal(command, via)}")
        if via == "arg":  # appended as one quoted word after the whole script: never inside its quotes
            command = f"{command} {shlex.quote(request.prompt)}"
        argv = ["/bin/sh", "-c", command]
    else:
        if in_code := code_placeholders(command, lambda word: shell_placeholders(word, via)):
            raise TargetError("config", f"command target: {refusal(command, *in_code[0])}")
        argv = [substitute(part, request, simple) for part in command]
        argv = [*argv, request.prompt] if via == "arg" else argv
    return argv, request.prompt.encode() if via == "stdin" else None


def shell_placeholders(command: str, via: str) -> list[str]:
    """The placeholders a shell string holds that a trial would fill in. A value substituted into a
    script is code if the author wrote it inside quotes (`echo "{prompt}"` runs `$(...)`), whatever
    quoting engine adds, so placeholders go into argv elements only."""
    found = [m.group(0) for m in _PLACEHOLDER.finditer(command)]
    return found if via == "template" else [p for p in found if p.startswith("{{")]


def shell_refusal(command: str, via: str) -> str:
    """Why a shell string with placeholders is refused, and the argv list to write instead."""
    names = ", ".join(dict.fromkeys(shell_placeholders(command, via)))
    return (
        f"expected placeholders ({names}) in an argv list, not a shell string (a value pasted into a "
        f"script can run as code); write command = {argv_form(command)}"
    )


_SHELL_SYNTAX = re.compile(r"[$`|;&<>()*?\[\]~#]|^\w+=")


def argv_form(command: str) -> str:
    """The argv list for a shell string: its words when it is a plain command line; otherwise the
    script run by sh with each placeholder passed as a positional argument ("$1", "$2"...)."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = []
    plain = words and not any(_SHELL_SYNTAX.search(_PLACEHOLDER.sub("", w)) for w in words)
    if plain:
        return json.dumps(words)
    values: list[str] = []

    def positional(match: re.Match[str]) -> str:
        values.append(match.group(0))
        return f"${len(values)}"

    script = _PLACEHOLDER.sub(positional, command)
    return json.dumps(["sh", "-c", script, "sh", *values])


def _simple_values(request: TargetRequest) -> dict[str, str]:
    return {
        "prompt": request.prompt, "model": request.model or "", "system": request.system or "",
        "case_id": request.case.id, "variant": request.variant.name,
    }  # fmt: skip


# `{{ matrix.model }}` (and params, flags) always; `{prompt}`-style names only with prompt_via = "template"
_PLACEHOLDER = re.compile(
    r"\{\{\s*(?P<scope>matrix|params|flags)\.(?P<key>[\w.-]+)\s*\}\}"
    r"|\{(?P<name>prompt|model|system|case_id|variant)\}"
)


def substitute(text: str, request: TargetRequest, simple: dict[str, str]) -> str:
    """Every placeholder in one argv element replaced in one pass: an inserted value is never scanned
    again, so a prompt or case id that contains `{case_id}` stays inert text."""

    def replace(match: re.Match[str]) -> str:
        if match.group("scope"):
            return _variant_value(request, match)
        name = match.group("name")
        return simple[name] if name in simple else match.group(0)

    return _PLACEHOLDER.sub(replace, text)


def _variant_value(request: TargetRequest, match: re.Match[str]) -> str:
    scope, key = match.group("scope"), match.group("key")
    variant = request.variant
    sources = {
        "params": [request.params],
        "flags": [request.flags],
        # a matrix entry's keys land in params, flags or the variant's own fields
        "matrix": [request.params, request.flags, {"model": request.model, "system": request.system}],
    }[scope]
    for source in sources:
        if source.get(key) is not None:
            return env_value(source[key])
    raise TargetError("config", f"{match.group(0)}: variant {variant.name!r} has no value for {key!r}")


def env_name(name: str) -> str:
    """A flag name as a portable environment variable suffix ("max-retries" -> "MAX_RETRIES")."""
    return re.sub(r"\W", "_", name).upper()


def env_value(value: Any) -> str:
    return value if isinstance(value, str) else msgspec.json.encode(value).decode()
