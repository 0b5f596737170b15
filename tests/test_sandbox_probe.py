"""The probe a run sends to each Ray worker before its first event (actors/sandbox/probe.py), run here
in a process whose PATH holds no bwrap, as on a node where bubblewrap is not installed: it names the
host and the package to install, in one line, and the run refuses with it."""

from __future__ import annotations

import os
import subprocess
import sys

PROBE = "from engine.actors.sandbox.probe import sandbox_problem_on_worker as p; print(p('bubblewrap'))"


def test_a_worker_without_bubblewrap_names_itself_and_the_package() -> None:
    env = {**os.environ, "PATH": os.path.dirname(sys.executable)}
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    line = done.stdout.strip()
    assert len(line.splitlines()) == 1 and "bubblewrap (bwrap) is not installed" in line
    assert "apt-get install bubblewrap" in line and line.split(":")[0]  # "host: why"
    plain = subprocess.run([sys.executable, "-c", PROBE.replace("bubblewrap", "none")], capture_output=True,
                           text=True, env=env, timeout=60)  # fmt: skip
    assert plain.stdout.strip() == "None"
