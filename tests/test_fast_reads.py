"""The typer-free path of `engine list`, `status` and `history` (cli.fast_reads): its tables are the
typer commands' own parameters, it reads only plain command lines and leaves the rest to typer, and
both paths print the same thing and fail the same way on a real store."""

from __future__ import annotations

import errno
import inspect
import sys
from pathlib import Path
from typing import Any

import pytest
import typer

from engine.cli import main as cli_main
from engine.cli import reads
from engine.cli.fast_reads import FAST, FLAGS, fast_read
from engine.cli.fast_reads import _parsed as parsed
from tests.test_cli_run import store_with_runs


def typer_command(name: str) -> Any:
    """The command as typer builds it (a click command: typer's own copy of click, on new Typers)."""
    group: Any = typer.main.get_command(cli_main.command_app(["engine", name]))
    return group.commands[name]


@pytest.mark.parametrize("name", sorted(FAST))
def test_the_tables_are_the_typer_commands_parameters(name: str) -> None:
    command, fast = typer_command(name), FAST[name]
    arguments = [p for p in command.params if p.param_type_name == "argument"]
    assert tuple(p.name for p in arguments) == fast.arguments
    assert sum(p.required for p in arguments) == fast.required
    options = [p for p in command.params if p.param_type_name == "option"]
    assert {o: p.name for p in options for o in p.opts} == fast.options
    assert {o for p in options if p.is_flag for o in p.opts} == FLAGS & set(fast.options)
    # the fast path leaves out what was not given: the body's defaults must be typer's
    body = inspect.signature(getattr(reads, fast.function)).parameters
    assert list(body) == [p.name for p in command.params]
    assert {p.name: p.default for p in command.params} == {
        n: p.default for n, p in body.items() if p.default is not inspect.Parameter.empty
    } | {p.name: None for p in arguments if p.required}


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        ([], {}),
        (["--json"], {"as_json": True}),
        (["--store", "st", "--json"], {"store": Path("st"), "as_json": True}),
        (["--store=st"], {"store": Path("st")}),
        (["--json=1"], None),  # click's error to give
        (["--help"], None),
        (["--store"], None),  # no value
        (["--store", "--json"], None),
        (["--store", "a", "--store", "b"], None),  # repeated: typer reads it
        (["r1"], None),  # list takes no argument
        (["--", "x"], None),
        (["-"], None),
    ],
)
def test_list_reads_plain_command_lines_only(words: list[str], expected: dict[str, Any] | None) -> None:
    assert parsed(FAST["list"], words) == expected


def test_arguments_are_counted_and_placed_anywhere() -> None:
    history, status = FAST["history"], FAST["status"]
    assert parsed(history, ["--metric", "cost_usd", "exp"]) == {"experiment": "exp", "metric": "cost_usd"}
    assert parsed(history, []) is None  # its experiment is required
    assert parsed(history, ["a", "b"]) is None
    assert parsed(status, []) == {}
    assert parsed(status, ["r1", "--json"]) == {"run_id": "r1", "as_json": True}
    assert fast_read(["engine", "serve"]) is None and fast_read(["engine"]) is None


def test_shell_completion_goes_to_click(monkeypatch: pytest.MonkeyPatch) -> None:
    assert fast_read(["engine", "list"]) is not None
    monkeypatch.setenv("_ENGINE_COMPLETE", "bash_complete")
    assert fast_read(["engine", "list"]) is None


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return store_with_runs(tmp_path_factory.mktemp("fast"), "r1", "r2", cases=3)


def outcome(capsys: pytest.CaptureFixture[str], argv: list[str], through_typer: bool) -> tuple[Any, str, str]:
    """(exit code, stdout, stderr) of `main()` on this command line, by either path."""
    with pytest.MonkeyPatch.context() as patch:
        if through_typer:
            patch.setattr(cli_main, "fast_read", lambda argv: None)
        patch.setattr("sys.argv", argv)
        patch.setattr("sys.stdout", sys.stdout)  # a closed pipe's wrapper does not outlive the test
        patch.setattr("sys.stderr", sys.stderr)
        with pytest.raises(SystemExit) as exited:
            cli_main.main()
    out, err = capsys.readouterr()
    return exited.value.code, out, err


@pytest.mark.parametrize(
    "words",
    [
        ["list"], ["list", "--json"], ["status"], ["status", "r1", "--json"], ["status", "nosuch"],
        ["history", "capitals"], ["history", "--json", "capitals", "--metric", "mean_score"],
        ["history", "capitals", "--variant", "nosuch"], ["history", "capitals", "--metric", "bogus"],
        ["history", "nosuch"],
    ],
)  # fmt: skip
def test_both_paths_print_the_same(store: Path, capsys: pytest.CaptureFixture[str], words: list[str]) -> None:
    argv = ["engine", *words, "--store", str(store)]
    assert fast_read(argv) is not None
    fast = outcome(capsys, argv, through_typer=False)
    assert fast == outcome(capsys, argv, through_typer=True)
    assert fast[0] in (0, 2) and (fast[1] or fast[2])


def test_a_missing_store_is_the_same_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["engine", "list", "--store", str(tmp_path / "none")]
    fast = outcome(capsys, argv, through_typer=False)
    assert fast == outcome(capsys, argv, through_typer=True)
    assert fast[0] == 2 and fast[2].startswith("error: no store at")


@pytest.mark.parametrize(
    ("raised", "code", "err"),
    [
        (KeyboardInterrupt(), 130, ""),  # Ctrl-C: typer exits 130 and says nothing
        (EOFError(), 1, "\nerror: aborted\n"),
        (BrokenPipeError(errno.EPIPE, "Broken pipe"), 1, ""),  # `engine list | head -1`
    ],
)
def test_interrupts_and_closed_pipes_end_as_through_typer(
    store: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    raised: BaseException, code: int, err: str,
) -> None:  # fmt: skip
    def interrupted(*args: object, **kw: object) -> None:
        raise raised

    monkeypatch.setattr(reads, "list_runs", interrupted)
    argv = ["engine", "list", "--store", str(store)]
    fast = outcome(capsys, argv, through_typer=False)
    assert fast == outcome(capsys, argv, through_typer=True) == (code, "", err)
