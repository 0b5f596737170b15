"""The web view's test helpers: a real store made by the real CLI, and `engine serve` in a subprocess."""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

from tests.conftest import SAFETY_S, engine_cmd, engine_env, run_engine
from tests.fakes.openai_server import FakeOpenAI, open_fake_openai
from tests.test_cli_run import experiment

XSS_VARIANT = '[[variants]]\nname = "xss"\ntarget = { callable = "tests.fixtures.agent:script_writer" }\n'


def make_store(cwd: Path) -> Path:
    """Two runs of one experiment (r1, and r2 with another seed) with passes, failures and a variant
    whose output is live HTML; returns the store directory."""
    text = experiment(cases=6, repeats=3, extra=XSS_VARIANT)
    text = text.replace("[[cases]]", '[[cases]]\ntags = ["geo"]', 2)
    (cwd / "exp.toml").write_text(text)
    for run_id, seed in (("r1", "7"), ("r2", "8")):
        args = ("run", "exp.toml", "--run-id", run_id, "--seed", seed, "--store", "st", "-q")
        ran = run_engine(*args, cwd=cwd)
        assert ran.returncode in (0, 1), ran.stderr.decode()
    return cwd / "st"


@contextmanager
def serving(store: Path, *args: str, **env: str) -> Iterator[str]:
    """`engine serve --port 0` on the store; yields its base URL (read from the line it prints).
    Its log goes to a file beside the store (a pipe nobody reads could fill and stall it)."""
    cmd = engine_cmd("serve", "--store", str(store), "--port", "0", *args)
    with (store.parent / "serve.err").open("w+") as err:
        proc = subprocess.Popen(cmd, env=engine_env(**env), stdout=subprocess.PIPE, stderr=err, text=True)
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()  # blocks until the server listens: its first line is the URL
            if not line.startswith("engine serve: http://"):
                proc.wait(timeout=SAFETY_S)
                err.seek(0)
                raise AssertionError(line + err.read())
            yield line.split()[2].split("?")[0].rstrip("/")
        finally:
            proc.terminate()
            proc.wait(timeout=SAFETY_S)


@asynccontextmanager
async def gated_live_run(tmp_path: Path) -> AsyncIterator[tuple[FakeOpenAI, Any, str]]:
    """(fake server, the `engine run` process, the view's URL) of run `live` with its first trial in
    the log and the rest held at the fake server's gate: the test releases answers as it pleases."""
    from tests.test_cli_lifecycle import Engine, answer
    from tests.test_cli_lifecycle import experiment as lifecycle_experiment

    async with open_fake_openai(answer=answer) as server:
        (tmp_path / "exp.toml").write_text(lifecycle_experiment(server.base_url))
        server.gate.hold()
        engine = await Engine(tmp_path, "live").start("run", "exp.toml", "--run-id", "live", "--store", "st")
        server.gate.release(2)
        await server.wait_received(3)  # trial 0 is in the log (one worker: two trials outstanding)
        with serving(tmp_path / "st") as url:
            yield server, engine, url
