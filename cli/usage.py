"""Command-line mistakes (a missing value, an unknown option, a bad number) as one error line, like
every other error engine reports, instead of click's usage block: the command, the option and what
was expected, and where the full usage is."""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any


def click_exceptions() -> ModuleType:
    """Typer's own copy of click's exceptions (newer Typer vendors click), else click's."""
    try:
        from typer._click import exceptions
    except ImportError:  # an older Typer, on click itself
        from click import exceptions
    return exceptions


def usage_line(exc: Any) -> str:
    """`engine report: option '--html' requires an argument (engine report --help lists the options)`."""
    from engine.events.commands import engine_command  # shlex: for a mistake, not at every start

    message = exc.format_message().strip().rstrip(".").replace("\n", " ")
    message = message[:1].lower() + message[1:]
    ctx = getattr(exc, "ctx", None)
    command = _command_words(ctx)
    where = " ".join(("engine", *command))
    if isinstance(exc, click_exceptions().UsageError):
        return f"{where}: {message} ({engine_command(*command, '--help')} lists the options)"
    return f"{where}: {message}"


def _command_words(ctx: Any) -> tuple[str, ...]:
    if ctx is None:  # some parse errors carry no context: the command is the first word typed
        typed = [arg for arg in sys.argv[1:2] if not arg.startswith("-")]
        return tuple(typed)
    words: list[str] = []
    while ctx is not None and ctx.parent is not None:  # the root's name is how Python was started
        words.insert(0, ctx.info_name or "")
        ctx = ctx.parent
    return tuple(w for w in words if w)
