"""`engine list`, `status` and `history` without typer. Importing typer (and the click it carries)
costs ~60 ms of CPU, more than these reads themselves on any store, and a person types them often.

Only their plain forms are read here: known options, each at most once, with a value where one is
due, and the right number of arguments. Anything else (`--help`, an unknown or repeated option, a
missing argument, `--`) returns None and goes to typer, which stays the one judge of usage and says
what is wrong. tests/test_fast_reads.py checks these tables against the typer commands' own
parameters and compares what both paths print."""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

COMMON = {"--store": "store", "--json": "as_json"}  # the options all three take
FLAGS = frozenset({"--json", "--all"})  # options without a value


class ReadCommand(NamedTuple):  # not a dataclass: `dataclasses` imports `inspect`, ~10 ms
    function: str  # in engine.cli.reads
    arguments: tuple[str, ...]  # positional parameters, in order
    required: int  # how many of them must be given
    options: dict[str, str]  # option -> parameter

    def call(self, given: dict[str, Any]) -> None:
        from engine.cli import reads

        run: Callable[..., None] = getattr(reads, self.function)
        run(**given)


FAST: dict[str, ReadCommand] = {
    "list": ReadCommand("list_runs", (), 0, COMMON),
    "status": ReadCommand("run_status", ("run_id",), 0, COMMON),
    "history": ReadCommand(
        "history", ("experiment",), 1,
        {"--metric": "metric", "--variant": "variant", "--all": "every", **COMMON},
    ),
}


def fast_read(argv: list[str]) -> Callable[[], int] | None:
    """The command to run for this command line (it returns the exit code), or None when typer
    should read it."""
    command = FAST.get(argv[1]) if len(argv) > 1 else None
    if command is None or _completing():
        return None
    given = _parsed(command, argv[2:])
    if given is None:
        return None
    return lambda: as_typer_runs(lambda: command.call(given))


def as_typer_runs(run: Callable[[], None]) -> int:
    """Run a command as typer's own main would: Ctrl-C exits 130 and says nothing, the end of input
    is an abort (exit 1), and a reader that closed the pipe (`engine list | head -1`) ends it
    quietly (exit 1). Engine errors go up to the entry point, as from typer."""
    try:
        run()
    except KeyboardInterrupt:
        return 130
    except EOFError:
        print("\nerror: aborted", file=sys.stderr)
        return 1
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        sys.stdout = _Unflushed(sys.stdout)  # type: ignore[assignment]
        sys.stderr = _Unflushed(sys.stderr)  # type: ignore[assignment]
        return 1
    return 0


class _Unflushed:
    """A stream whose reader is gone: what is still buffered is dropped at exit, without a second
    broken-pipe error (as click does)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as exc:
            if exc.errno != errno.EPIPE:
                raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _parsed(command: ReadCommand, words: list[str]) -> dict[str, Any] | None:
    given: dict[str, Any] = {}
    arguments: list[str] = []
    rest = iter(words)
    for word in rest:
        if not word.startswith("-"):
            arguments.append(word)
            continue
        option, has_value, value = word.partition("=")
        parameter = command.options.get(option)
        if parameter is None or parameter in given:
            return None
        if option in FLAGS:
            if has_value:
                return None
            given[parameter] = True
            continue
        if not has_value:
            value = next(rest, "")
        if not value or value.startswith("-"):
            return None  # click's own reading of these is for typer to give
        given[parameter] = Path(value) if parameter == "store" else value
    if not command.required <= len(arguments) <= len(command.arguments):
        return None
    given.update(zip(command.arguments, arguments, strict=False))
    return given


def _completing() -> bool:
    """Shell completion is click's: it reads the command line from its own variables."""
    return any(name.startswith("_") and name.endswith("_COMPLETE") for name in os.environ)
