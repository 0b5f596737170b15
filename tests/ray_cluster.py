"""A real local Ray cluster for the `ray`-marked tests.

`RAY_ADDRESS` set (as `.ci/run` does, after `ray start --head`): the tests join that cluster.
Otherwise one is started here, `ray start --head --block` in its own process group with 2 CPUs and
its own temp dir, and the whole group is stopped afterwards (by its id: never `ray stop`, which
would stop every Ray instance on the machine). A loopback test cluster needs no token: both sides
run with RAY_AUTH_MODE=disabled (a token in ~/.ray would be shared by every cluster of this user).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

READY = "Ray runtime started"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def local_cluster(num_cpus: int = 2) -> Iterator[str]:
    """The address of a running cluster (RAY_ADDRESS, or one started for the block)."""
    if os.environ.get("RAY_ADDRESS"):
        yield os.environ["RAY_ADDRESS"]
        return
    port = free_port()
    ray = str(Path(sys.executable).with_name("ray"))
    with tempfile.TemporaryDirectory(prefix="rt", dir="/tmp") as temp:  # short: Ray's socket paths
        argv = [
            ray, "start", "--head", "--block", f"--num-cpus={num_cpus}", f"--port={port}",
            "--include-dashboard=false", f"--temp-dir={temp}", "--disable-usage-stats",
        ]  # fmt: skip
        head = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
            env={**os.environ, "RAY_AUTH_MODE": os.environ.get("RAY_AUTH_MODE", "disabled")},
        )  # fmt: skip
        try:
            assert head.stdout is not None
            seen = []
            for line in head.stdout:  # ready when it says so (a line, not a timer)
                seen.append(line)
                if READY in line:
                    break
            else:
                raise RuntimeError("ray start failed:\n" + "".join(seen[-20:]))
            # keep reading what it prints, so a full pipe never blocks it
            threading.Thread(target=head.stdout.read, daemon=True).start()
            yield f"127.0.0.1:{port}"
        finally:
            os.killpg(head.pid, signal.SIGTERM)
            head.wait()
