"""A second signal forces the stop: one clear line, the run left resumable, never a traceback.

The engine runs in a subprocess against the fake server with its gate held, so a trial is in flight
when the signals arrive: the graceful stop (first SIGINT) waits on it, and the second signal is what
ends the process. The test reads stderr as it comes (the first signal's notice is an event).
"""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import trio

from tests.conftest import engine_cmd, engine_env, run_engine
from tests.fakes.openai_server import open_fake_openai
from tests.test_cli_lifecycle import SAFETY_S, TOTAL, answer, experiment


async def read_until(stream: trio.abc.ReceiveStream, needle: bytes, seen: bytes = b"") -> bytes:
    with trio.fail_after(SAFETY_S):
        while needle not in seen:
            chunk = await stream.receive_some(4096)
            assert chunk, seen
            seen += chunk
    return seen


async def test_second_signal_forces_a_stop_without_traceback(tmp_path: Path) -> None:
    async with open_fake_openai(answer=answer) as server:
        (tmp_path / "exp.toml").write_text(experiment(server.base_url))
        server.gate.hold()
        args = ("run", "exp.toml", "--run-id", "forced", "--json", "--store", "st")
        proc = await trio.lowlevel.open_process(
            engine_cmd(*args), cwd=tmp_path, env=engine_env(), stderr=subprocess.PIPE
        )
        assert proc.stderr is not None
        server.gate.release(2)
        await server.wait_received(3)  # trial 3 is held in flight: the graceful stop waits on it
        proc.send_signal(signal.SIGINT)
        seen = await read_until(proc.stderr, b"again to force")
        proc.send_signal(signal.SIGINT)
        with trio.fail_after(SAFETY_S):
            async for chunk in proc.stderr:
                seen += chunk
            code = await proc.wait()
        server.gate.open()
        err = seen.decode()
        assert code == 130, err
        assert "Traceback" not in err and "forced stop" in err
        # the command to go on, whole, with the store's absolute path (it runs from any folder)
        assert f"\n  engine run --resume forced --store {tmp_path.resolve() / 'st'}\n" in err
        listed = run_engine("list", "--json", "--store", "st", cwd=tmp_path, timeout=SAFETY_S)
        # the force may land before or after the graceful stop made its cancel durable
        status = {r["run_id"]: r["status"] for r in json.loads(listed.stdout)}["forced"]
        assert status in ("interrupted", "cancelled")
        with trio.fail_after(SAFETY_S):  # the server answers from this loop: never block it
            resumed = await trio.run_process(
                engine_cmd("run", "--resume", "forced", "--json", "--store", "st"),
                cwd=tmp_path, env=engine_env(), capture_stdout=True, capture_stderr=True, check=False,
            )  # fmt: skip
        assert resumed.returncode == 0, resumed.stderr
        assert json.loads(resumed.stdout)["trials_done"] == TOTAL
