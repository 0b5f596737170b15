"""The fake OpenAI-compatible server (tests/fakes/openai_server.py) in a process of its own, for the
benchmarks that measure the engine against it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def start_server(latency_ms: int, joined_stream: bool = False) -> tuple[subprocess.Popen[str], str]:
    """(the server's process, its base URL); the caller kills the process. `joined_stream`: a streamed
    answer is one write (as a buffering proxy sends it), not a write per token."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "tests.fakes.openai_server", "--port", "0", "--latency-ms", str(latency_ms)]
    cmd += ["--joined-stream"] if joined_stream else []
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if not line.startswith("LISTENING "):
        proc.kill()
        raise RuntimeError(f"fake server did not start: {line!r}")
    return proc, line.split(" ", 1)[1]
