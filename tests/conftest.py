"""Shared helpers: run the real `engine` CLI in a subprocess against a real LMDB store."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    import trio

    from tests.browser import BrowserThread

ROOT = Path(__file__).resolve().parent.parent


def engine_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    env.update(extra)
    return env


def engine_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "engine.cli.main", *args]


def run_engine(*args: str, cwd: Path, timeout: float = 300, **env: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        engine_cmd(*args), cwd=cwd, env=engine_env(**env), capture_output=True, timeout=timeout
    )


# engine processes a test started in the background (test_cli_lifecycle.Engine): a test that fails
# before it waited for one must not leave it running (a run left holding a shared Ray cluster's CPUs
# would change what the next test sees)
STARTED: list[trio.Process] = []


@pytest.fixture(autouse=True)
def no_engine_left_running() -> Iterator[None]:
    yield
    while STARTED:
        proc = STARTED.pop()
        if proc.returncode is None:
            try:
                os.kill(proc.pid, signal.SIGKILL)
                os.waitpid(proc.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass  # it had ended (and was reaped) already


@pytest.fixture
def write_experiment(tmp_path: Path):
    def write(text: str, name: str = "exp.toml") -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    return write


SAFETY_S = 300.0  # a hang guard only: no test waits on time to decide what happened


def pid_fifo(folder: Path) -> Path:
    """A FIFO an agent writes a pid into: reading it waits for the agent (an event, not a poll)."""
    path = folder / "pid.fifo"
    os.mkfifo(path)
    return path


async def read_pid(fifo: Path) -> int:
    import trio

    with trio.fail_after(SAFETY_S):  # (virtual time under a mock clock: then only the thread waits)
        return int(await trio.to_thread.run_sync(fifo.read_text, abandon_on_cancel=True))


async def gone(pid: int) -> bool:
    """Wait until pid has exited: a pidfd turns readable when the process ends (no polling)."""
    import trio

    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        with trio.fail_after(SAFETY_S):
            await trio.lowlevel.wait_readable(fd)
    finally:
        os.close(fd)
    return True


def warnings_in(stderr: bytes) -> list[str]:
    """The `warning:` messages a command printed, each unfolded to one line (the CLI folds prose to
    100 columns, continuing it on indented lines)."""
    found: list[str] = []
    for line in stderr.decode().splitlines():
        if line.startswith("warning:"):
            found.append(line)
        elif found and line.startswith("  ") and not line.startswith("   "):
            found[-1] += " " + line.strip()
    return found


@pytest.fixture(scope="module")
def browser() -> Iterator[BrowserThread]:
    """One Chromium per test module (Debian's, driven by Playwright on a thread of its own)."""
    from tests.browser import BrowserThread, require_browser

    require_browser()
    thread = BrowserThread()
    yield thread
    thread.close()
