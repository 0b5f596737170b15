"""The `engine` program: its commands' list, the one command asked for built alone, and errors told
as one line. typer is the one parser of every command line; each command group is one module (or a
small sub-package) of cli/, and heavy imports (trio, lmdb, httpx) happen inside the commands so
`--help` is fast. What typer costs a command's start: benchmarks/README.md#one-parser-one-terminal-table."""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

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
    ("run", "run.commands", "run"),
    ("plan", "run.plan", "plan"),
    ("replay", "run.commands", "replay"),
    ("report", "run.commands", "report"),
    ("list", "lifecycle", "list_cmd"),
    ("status", "lifecycle", "status"),
    ("cancel", "lifecycle", "cancel"),
    ("create", "lifecycle", "create"),
    ("validate", "lifecycle", "validate"),
    ("compare", "compare.commands", "compare"),
    ("import", "store.commands", "import_cmd"),
    ("history", "compare.commands", "history"),
    ("mark", "compare.commands", "mark"),
    ("label", "grading", "label"),
    ("judge-audit", "grading", "judge_audit"),
    ("regrade", "grading", "regrade"),
    ("export", "store.commands", "export"),
    ("promote", "promote", "promote"),
    ("best", "promote", "best"),
    ("check", "store.commands", "check"),
    ("backup", "store.commands", "backup"),
    ("rebuild", "store.commands", "rebuild"),
    ("serve", "serve", "serve"),
)


def program() -> None:
    """The `engine` command (its console script, `python -m engine.cli.main`): main(), then the
    process ends without the interpreter's teardown (cli.quick_exit)."""
    try:
        main()
    except SystemExit as done:
        if getattr(sys.modules.get("__main__"), "program", None) is program:  # the process's own main
            from engine.cli.quick_exit import end_process

            end_process(done)
        raise


def main() -> None:
    """Every error is one `error: ...` line, user errors exit 2, no traceback; ends with SystemExit."""
    _plain_input_warnings()
    try:
        code = _typer_main(sys.argv)
    except Exception as exc:
        found = _exit_and_line(exc)
        if found is None:
            raise
        code, line = found
        print(error_text(line), file=sys.stderr)
        sys.exit(code)
    sys.exit(code if isinstance(code, int) else 0)


def error_text(line: str) -> str:
    """`error: ...`: one line for a log or a pipe (grep finds it whole); on a terminal folded at 100
    columns, a path or a command kept whole on a line of its own."""
    from engine.cli.wrap import fold

    text = f"error: {line}"
    return fold(text) if sys.stderr.isatty() else text


def _typer_main(argv: list[str]) -> Any:
    """Parse and run through typer, telling a usage error as one line."""
    import typer

    from engine.cli.usage import click_exceptions, usage_line

    click = click_exceptions()
    argv[:] = optional_values(argv)
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


OPTIONAL_VALUES = {"--reuse": "on"}  # options that may go without their value (`--reuse[=RUN]`)


def optional_values(argv: list[str]) -> list[str]:
    """`--reuse` alone as `--reuse=on`: the parser has no options whose value is optional, and a
    value after a space would be ambiguous with the FILE argument (`--reuse=RUN` names a run)."""
    if "--" in argv:
        cut = argv.index("--")
        return optional_values(argv[:cut]) + argv[cut:]
    return [f"{arg}={OPTIONAL_VALUES[arg]}" if arg in OPTIONAL_VALUES else arg for arg in argv]


def command_app(argv: list[str]) -> typer.Typer:
    """The app with only the command asked for: typer reads every command's signature and options at
    each start, and `engine list` should not pay for `engine serve`'s (what is left of typer's cost:
    benchmarks/README.md#one-parser-one-terminal-table). Anything else (no command, `--help`, a
    misspelt one) gets the whole app, for its list and hints."""
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
    program()
