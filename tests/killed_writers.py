"""A writing process killed with SIGKILL at seeded points of its own progress: the store it leaves is
what the kill -9 tests read (snapshots, the trial index)."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from tests.test_log import subprocess_env


def killed_writers(
    store: Path, writer: str, max_every: int, max_batches: int, kills: int = 4
) -> Iterator[str]:
    """Run `writer` (Python code: argv[1] the store, argv[2] its batches' size; it prints a line after
    each durable batch) `kills` times, each killed after a seeded number of its reports; yields the
    context to name in assertions (the seed reproduces the kill points) after each kill."""
    rng = random.Random()
    seed = rng.randrange(1 << 30)
    rng.seed(seed)
    for kill in range(kills):
        every = rng.randrange(1, max_every)
        command = [sys.executable, "-c", writer, str(store), str(every)]
        proc = subprocess.Popen(command, env=subprocess_env(), stdout=subprocess.PIPE)
        assert proc.stdout is not None
        for _ in range(rng.randrange(1, max_batches)):  # a kill point read from the writer's own reports
            assert proc.stdout.readline(), "the writer stopped early"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        yield f"seed {seed}, kill {kill}, every {every}"
