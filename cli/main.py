"""The `engine` program: its commands' list, the one command asked for built alone, and errors told
as one line. The commands live in cli/*_commands.py; heavy imports (trio, lmdb, httpx) happen inside
them so `--help` is fast."""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from engine.cli.fast_reads import fast_read

if TYPE_CHECKING:
    import typer

APP_SETTINGS: dict[str, Any] = {
    "no_args_is_help": True,
    "add_completion": False,
    "pretty_exceptions_enable": False,
    "help": "Event-sourced experiments engine for LLM agents.",
    # plain help text: rich markup would swallow "[schedule]" and other TOML table names
    "rich_markup_mode": None,
}

# every command in the order `engine --help` lists it: (name, module in engine.cli, function). A name
# is enough to pick a command, so `engine list` imports only the module that holds `list`
COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("run", "run_commands", "run"),
    ("replay", "run_commands", "replay"),
    ("report", "run_commands", "report"),
    ("list", "lifecycle_commands", "list_cmd"),
    ("status", "lifecycle_commands", "status"),
    ("cancel", "lifecycle_commands", "cancel"),
    ("create", "lifecycle_commands", "create"),
    ("validate", "lifecycle_commands", "validate"),
    ("compare", "compare_commands", "compare"),
    ("import", "store_commands", "import_cmd"),
    ("history", "compare_commands", "history"),
    ("mark", "compare_commands", "mark"),
    ("label", "grading_commands", "label"),
    ("judge-audit", "grading_commands", "judge_audit"),
    ("regrade", "grading_commands", "regrade"),
    ("export", "store_commands", "export"),
    ("promote", "promote_commands", "promote"),
    ("best", "promote_commands", "best"),
    ("check", "store_commands", "check"),
    ("backup", "store_commands", "backup"),
    ("rebuild", "store_commands", "rebuild"),
    ("serve", "serve_command", "serve"),
)


def main() -> None:
    """Console entry point: every error is one `error: ...` line, user errors exit 2, no traceback."""
    _plain_input_warnings()
    fast = fast_read(sys.argv)  # list, status, history: typer is not imported for their plain forms
    try:
        code = fast() if fast is not None else _typer_main(sys.argv)
    except Exception as exc:
        found = _exit_and_line(exc)
        if found is None:
            raise
        code, line = found
        print(error_text(line), file=sys.stderr)
        sys.exit(code)
    sys.exit(code if isinstance(code, int) else 0)


def error_text(line: str) -> str:
    """`error: ...`: one line for a log or a pipe (grep finds it whole); on a terminal (or when COLUMNS
    gives a width) folded at 100 columns, a path or a command kept whole on a line of its own."""
    import os

    from engine.cli.wrap import fold

    text = f"error: {line}"
    return fold(text) if sys.stderr.isatty() or os.environ.get("COLUMNS") else text


def _typer_main(argv: list[str]) -> Any:
    """Parse and run through typer, telling a usage error as one line."""
    import typer

    from engine.cli.usage import click_exceptions, usage_line

    click = click_exceptions()
    try:
        # usage errors come back here, to be told as one line
        return command_app(argv)(standalone_mode=False)
    except getattr(click, "NoArgsIsHelpError", ()) as exc:  # bare `engine`: the command list (click 8.2+)
        exc.show()
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        print(error_text(usage_line(exc)), file=sys.stderr)
        sys.exit(exc.exit_code)
    except typer.Abort:
        print("error: aborted", file=sys.stderr)
        sys.exit(1)


def command_app(argv: list[str]) -> typer.Typer:
    """The app with only the command asked for: typer reads every command's signature and options at
    each start (tens of ms for all of them), and `engine list` should not pay for `engine serve`'s.
    Anything else (no command, `--help`, a misspelt one) gets the whole app, for its list and hints."""
    asked = argv[1] if len(argv) > 1 else ""
    chosen = [command for command in COMMANDS if command[0] == asked]
    if not chosen:
        return _whole_app()
    one = _with_commands(chosen)
    one.callback()(_one_command_group)
    return one


@functools.cache
def _whole_app() -> typer.Typer:
    return _with_commands(COMMANDS)


def _with_commands(commands: Iterable[tuple[str, str, str]]) -> typer.Typer:
    """An app holding these commands, in this order; only their modules are imported."""
    import typer

    built = typer.Typer(**APP_SETTINGS)
    for name, module, function in commands:
        built.command(name)(getattr(importlib.import_module(f"engine.cli.{module}"), function))
    return built


def __getattr__(name: str) -> Any:
    """`app` (the whole program, as `from engine.cli.main import app` knows it) is built when asked
    for: importing this module for one command must not import every command's module."""
    if name == "app":
        return _whole_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _one_command_group() -> None:
    """With a single command and no callback typer makes that command the program itself (`engine
    FILE`); a callback keeps the group, so `engine run FILE` parses as it always does."""


def _exit_and_line(exc: Exception) -> tuple[int, str] | None:
    """An engine error says its own exit code; an I/O failure (a full disk: what was committed
    stays, and the run resumes) exits 1; anything else (None) is a bug, shown with its traceback."""
    from engine.errors import find_error
    from engine.events.errors import EngineError

    found = find_error(exc, EngineError)
    if isinstance(found, EngineError):
        return found.exit_code, str(found)
    io_error = find_error(exc, OSError)
    if io_error is not None:
        return 1, f"I/O error: {io_error}"
    return None


def _plain_input_warnings() -> None:
    """An InputWarning is one `warning: FILE: FIELD: ...` line on stderr, not Python's source excerpt."""
    import warnings

    from engine.errors import InputWarning

    python_format = warnings.formatwarning

    def format_warning(message: Warning | str, category: type[Warning], *rest: Any, **kw: Any) -> str:
        if issubclass(category, InputWarning):
            from engine.cli.wrap import fold

            return fold(f"warning: {message}") + "\n"
        return python_format(message, category, *rest, **kw)

    warnings.formatwarning = format_warning  # type: ignore[assignment]


if __name__ == "__main__":
    main()
