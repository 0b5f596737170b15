"""Start-up imports only what the command needs (a structural check; the timings are in
benchmarks/bench_s1.py): `engine --help` none of the heavy libraries, and a small `engine run` of an
HTTP target neither NumPy/SciPy (statistics of small runs are exact integers), nor the web view's
libraries, nor httpx/httpcore (the targets' own HTTP client), nor YAML for a TOML file, nor rich's
progress bar without a terminal, nor pydantic (typer below 0.29); `engine list` and `status` not trio."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import trio

from tests.conftest import SAFETY_S, engine_env
from tests.fakes.openai_server import open_fake_openai

HEAVY = ["numpy", "scipy", "starlette", "hypercorn", "httpx", "httpcore", "yaml", "pydantic", "tomlkit"]

# runs the CLI as `engine` does, then writes the top-level modules it imported to the file argv[1]
PROBE = """
import atexit, json, runpy, sys
out = sys.argv[1]
atexit.register(lambda: open(out, "w").write(json.dumps(sorted({m.split(".")[0] for m in sys.modules}))))
sys.argv = ["engine", *sys.argv[2:]]
runpy.run_module("engine.cli.main", run_name="__main__")
"""


async def imported_by(tmp_path: Path, *args: str) -> set[str]:
    out = tmp_path / "modules.json"
    with trio.fail_after(SAFETY_S):
        done = await trio.run_process(
            [sys.executable, "-c", PROBE, str(out), *args], cwd=tmp_path, env=engine_env(),
            capture_stdout=True, capture_stderr=True, check=False,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()
    return set(json.loads(out.read_text()))


async def test_help_imports_no_heavy_library(tmp_path: Path) -> None:
    modules = await imported_by(tmp_path, "--help")
    assert modules.isdisjoint([*HEAVY, "trio", "rich", "lmdb"]), modules & {*HEAVY, "trio", "rich", "lmdb"}


async def test_a_small_run_imports_only_what_it_uses(tmp_path: Path) -> None:
    async with open_fake_openai() as server:
        (tmp_path / "exp.toml").write_text(
            f'name = "small"\n[target]\nkind = "openai"\nbase_url = "{server.base_url}"\n'
            + "".join(f'[[cases]]\nid = "c{i}"\nprompt = "q"\nexpected = "42"\n' for i in range(3))
        )
        modules = await imported_by(tmp_path, "run", "-q", "exp.toml", "--store", "st")
    assert len(server.requests) == 3  # the run did call the target
    assert modules.isdisjoint(HEAVY), modules & set(HEAVY)
    assert "trio" in modules and "lmdb" in modules


async def test_reading_commands_import_no_event_loop(tmp_path: Path) -> None:
    """`engine list` and `status` read the store's kept snapshots: no trio, and not the installed
    packages' metadata (entry points are read only when a kind engine lacks is met)."""
    async with open_fake_openai() as server:
        (tmp_path / "exp.toml").write_text(
            f'name = "small"\n[target]\nkind = "openai"\nbase_url = "{server.base_url}"\nmodel = "m"\n'
            '[[cases]]\nid = "c0"\nprompt = "q"\nexpected = "42"\n'
        )
        await imported_by(tmp_path, "run", "-q", "exp.toml", "--store", "st", "--run-id", "r1")
    for command in (["list"], ["status", "r1"]):
        modules = await imported_by(tmp_path, *command, "--store", "st")
        assert "lmdb" in modules  # the command did read the store
        assert modules.isdisjoint([*HEAVY, "trio", "email"]), (command, modules & {*HEAVY, "trio", "email"})


def test_only_the_command_asked_for_is_built() -> None:
    """typer builds every command's options at start: a named command gets an app of its own; no
    command, `--help` or a misspelt one get the whole app (its list, its "did you mean")."""
    from engine.cli.main import app, command_app

    one = command_app(["engine", "judge-audit", "r1"])
    assert [info.callback.__name__ for info in one.registered_commands] == ["judge_audit"]
    assert one.registered_callback is not None  # a group still: `engine judge-audit ...` parses as before
    for argv in (["engine"], ["engine", "--help"], ["engine", "lst"]):
        assert command_app(argv) is app
