"""Every error is one line, `error: ...`, naming the command's option or the file and field, with
exit code 2: command-line mistakes too (no click usage block), a graders file's bad kind with the
valid kinds, a busy port with the port and a way out."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
from pathlib import Path

import pytest

from tests.conftest import SAFETY_S, engine_cmd, engine_env, run_engine
from tests.serve_helpers import make_store


def one_error_line(result: subprocess.CompletedProcess[bytes]) -> str:
    lines = result.stderr.decode().strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert b"Usage:" not in result.stderr + result.stdout and b"Traceback" not in result.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["report", "--html"], "engine report: option '--html' requires an argument (engine report --help"),
        (["compare", "a", "b", "--variant", "x"], "compare: --variant: expected --base-variant A and"),
        (["run", "--jsn"], "engine run: no such option: --jsn"),
        (["serve", "--port", "x"], "engine serve: invalid value for '--port'"),
        (["serve", "--port", "99999"], "'--port': 99999 is not in the range 0<=x<=65535"),
        (["report", "--html", "nowhere/r.html"], "report: --html: no folder nowhere to write r.html in"),
        (["report", "--format", "json", "--out", "."], "report: --out: . is a folder: expected a file"),
        (["export", "--out", "nowhere/t.jsonl"], "export: --out: no folder nowhere to write t.jsonl in"),
        (["run", "--reuse", "--no-reuse"], "run: --no-reuse: expected --reuse or --no-reuse, not both"),
        (["validate"], "engine validate: missing argument"),
        (["nosuch"], "engine: no such command 'nosuch'"),
    ],
)
def test_a_command_line_mistake_is_one_line_naming_the_option(
    tmp_path: Path, args: list[str], expected: str
) -> None:
    assert expected in one_error_line(run_engine(*args, cwd=tmp_path))


def test_a_bad_grader_kind_in_a_graders_file_lists_the_valid_kinds(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    (tmp_path / "g.toml").write_text('[[graders]]\nkind = "containz"\n')
    regraded = run_engine("regrade", "r1", "--graders", "g.toml", "--store", str(store), cwd=tmp_path)
    line = one_error_line(regraded)
    assert "g.toml: graders[0].kind: expected one of exact, contains," in line and "'containz'" in line


def test_a_busy_port_is_named_with_a_way_out(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        line = one_error_line(run_engine("serve", "--store", str(store), "--port", str(port), cwd=tmp_path))
    assert f"engine serve: --port: 127.0.0.1:{port} is in use" in line and "--port N" in line


def test_open_without_a_browser_says_so(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    env = engine_env(BROWSER="false")  # the only browser there is fails to start
    env.pop("DISPLAY", None)
    cmd = engine_cmd("serve", "--store", str(store), "--port", "0", "--open")
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    guard = threading.Timer(SAFETY_S, proc.kill)  # a hang guard only
    guard.start()
    try:
        assert proc.stdout is not None and proc.stderr is not None
        assert proc.stdout.readline().startswith("engine serve: http://")
        said = next((line for line in proc.stderr if "--open" in line), "")
    finally:
        guard.cancel()
        proc.terminate()
        proc.wait(timeout=SAFETY_S)
    assert "--open found no browser" in said
    assert os.path.exists(store)
