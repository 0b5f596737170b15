"""How a command ends when the person stops it or stops reading: Ctrl-C exits 130 and says nothing, the
end of input is an abort (exit 1), and a reader that closed the pipe (`engine list | head -1`) ends it
quietly. typer is the one parser, so these hold for every command; `list` stands for them."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.cli import main as cli_main
from tests.conftest import engine_cmd, engine_env
from tests.test_cli_run import store_with_runs


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return store_with_runs(tmp_path_factory.mktemp("endings"), "r1", "r2", cases=3)


def outcome(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[object, str, str]:
    """(exit code, stdout, stderr) of `main()` on this command line."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("sys.argv", argv)
        patch.setattr("sys.stdout", sys.stdout)  # a closed pipe's wrapper does not outlive the test
        patch.setattr("sys.stderr", sys.stderr)
        with pytest.raises(SystemExit) as exited:
            cli_main.main()
    out, err = capsys.readouterr()
    return exited.value.code, out, err


@pytest.mark.parametrize(
    ("raised", "code", "err"),
    [
        (KeyboardInterrupt(), 130, ""),  # Ctrl-C: exit 130, nothing said
        (EOFError(), 1, "\nerror: aborted\n"),
        (BrokenPipeError(errno.EPIPE, "Broken pipe"), 1, ""),  # `engine list | head -1`
    ],
)
def test_interrupts_and_closed_pipes_end_quietly(
    store: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    raised: BaseException, code: int, err: str,
) -> None:  # fmt: skip
    def interrupted(*args: object, **kw: object) -> None:
        raise raised

    monkeypatch.setattr("engine.runtime.run_status.list_runs", interrupted)
    assert outcome(capsys, ["engine", "list", "--store", str(store)]) == (code, "", err)


def test_a_reader_gone_before_the_table_is_written_is_no_error(store: Path) -> None:
    """A real closed pipe: its read end is closed before engine starts, so the first write fails."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            engine_cmd("list", "--store", str(store)),
            stdout=write_end,
            stderr=subprocess.PIPE,
            env=engine_env(),
        )
    finally:
        os.close(write_end)
    assert done.returncode == 1 and done.stderr == b""


def test_list_status_and_history_print_their_tables(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = outcome(capsys, ["engine", "list", "--store", str(store)])
    assert code == 0 and out.splitlines()[1].split() == [
        "run",
        "id",
        "experiment",
        "status",
        "trials",
        "started",
    ]
    assert [line.split()[0] for line in out.splitlines()[3:5]] == ["r1", "r2"]
    code, out, _ = outcome(capsys, ["engine", "status", "r1", "--store", str(store)])
    assert code == 0 and out.startswith("r1  capitals  completed")
    code, out, _ = outcome(capsys, ["engine", "history", "capitals", "--store", str(store)])
    assert code == 0 and out.startswith("capitals: pass_rate of the baseline") and "last green" in out
    code, _, err = outcome(
        capsys, ["engine", "history", "capitals", "--metric", "bogus", "--store", str(store)]
    )
    assert code == 2 and err.startswith("error: engine history: --metric: expected one of")
