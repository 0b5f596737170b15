"""What engine starts of Ray it stops, even when it is killed: a local Ray instance (no `address`)
started by `engine run`, then kill -9 of the coordinator mid-trial. The agent reports its pid on a
FIFO once the trial runs (Ray is up then); the test waits for the reaper's exit through a pidfd
(events, not the clock) and then finds none of the Ray processes left. Marker `ray`."""

from __future__ import annotations

import logging
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path

import pytest
import trio

from engine.runtime.ray_reaper import PROC, alive, descendants, marked, ray_processes
from tests.conftest import SAFETY_S, gone, pid_fifo, read_pid
from tests.test_cli_lifecycle import Engine

pytest.importorskip("ray")
pytestmark = pytest.mark.ray

AGENT = "import os, sys; open(sys.argv[1], 'w').write(str(os.getpid())); sys.stdin.read()"


def experiment(fifo: Path) -> str:
    return (
        f'name = "reaped"\n[target]\nkind = "command"\n'
        f'command = ["{sys.executable}", "-c", "{AGENT}", "{fifo}"]\n'
        'timeout_s = 600\n[execution]\nbackend = "ray"\nconcurrency = 1\n'
        '[[cases]]\nid = "a"\nprompt = "x"\nexpected = "x"\n'
    )


def reaper_of(engine_pid: int) -> int:
    (found,) = [
        pid for pid in descendants(engine_pid)
        if b"engine.runtime.ray_reaper" in (PROC / str(pid) / "cmdline").read_bytes()
    ]  # fmt: skip
    return found


async def test_a_killed_coordinator_leaves_no_ray_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")  # a loopback instance (no token written to ~/.ray)
    monkeypatch.setenv("ENGINE_RAY_NUM_CPUS", "1")
    # a local instance engine starts itself: not the cluster CI names in RAY_ADDRESS for other tests
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    temp = tempfile.mkdtemp(prefix="rt", dir="/tmp")  # short: Ray's socket paths must fit in 107 bytes
    request.addfinalizer(lambda: shutil.rmtree(temp, ignore_errors=True))
    monkeypatch.setenv("RAY_TMPDIR", temp)
    fifo = pid_fifo(tmp_path)
    (tmp_path / "exp.toml").write_text(experiment(fifo))
    engine = await Engine(tmp_path, "run").start("run", "exp.toml", "--store", "st", "-q")
    await read_pid(fifo)  # the trial runs on a Ray worker: the local instance is up
    assert engine.proc is not None
    started = marked(ray_processes(engine.proc.pid))
    assert len(started) >= 3  # its servers and agents, at least
    reaper = reaper_of(engine.proc.pid)
    engine.signal(signal.SIGKILL)
    await engine.finish()
    assert await gone(reaper)  # the pipe ended with the coordinator: the reaper did its work and left
    left = [pid for pid, when in started if alive(pid, when)]
    assert left == [], left


def test_rays_token_notice_is_not_printed(caplog: pytest.LogCaptureFixture) -> None:
    from engine.runtime.ray_session import TOKEN_LOG, _NotTokenNotice

    log = logging.getLogger(TOKEN_LOG)
    log.addFilter(_NotTokenNotice())
    with caplog.at_level(logging.WARNING, logger=TOKEN_LOG):
        log.warning("Token authentication is enabled for this Ray cluster. Set RAY_AUTH_MODE=disabled ...")
        log.warning("Token authentication is disabled for this Ray cluster. Anyone with network access ...")
    assert [r.getMessage()[:40] for r in caplog.records] == ["Token authentication is disabled for thi"]


async def test_sigterm_while_ray_starts_is_honoured_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ray reads its token file while it starts: a FIFO there holds it inside start-up for as long as
    the test keeps the FIFO's other end open (an event, not a timer). SIGTERM then ends the run."""
    token = tmp_path / "token.fifo"
    os.mkfifo(token)
    monkeypatch.setenv("RAY_AUTH_MODE", "token")
    monkeypatch.setenv("RAY_AUTH_TOKEN_PATH", str(token))
    monkeypatch.setenv("ENGINE_RAY_NUM_CPUS", "1")
    monkeypatch.delenv("RAY_ADDRESS", raising=False)  # Ray's own start-up, not a join of CI's cluster
    (tmp_path / "exp.toml").write_text(experiment(tmp_path / "unused.fifo"))
    engine = await Engine(tmp_path, "run").start("run", "exp.toml", "--store", "st", "-q")
    with trio.fail_after(SAFETY_S):  # opens once Ray opens it to read: Ray is starting
        holder = await trio.to_thread.run_sync(token.open, "w", abandon_on_cancel=True)
    try:
        engine.signal(signal.SIGTERM)
        code, _, err = await engine.finish()  # (Ray's start-up is still blocked on the FIFO)
    finally:
        holder.close()
    assert code == 128 + signal.SIGTERM, err
    assert "Traceback" not in err
