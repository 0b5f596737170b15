"""Running another tool's file as its users would: loaded from disk, run in-process on a memory store."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from engine.api import open_engine
from engine.events.report import RunReport
from engine.input.loader import load_experiment
from engine.store.memory import MemoryStore


async def run_file(path: Path, store: MemoryStore | None = None, run_id: str | None = None) -> RunReport:
    """The file loaded and run as `engine run FILE` would (its folder anchors relative paths)."""
    spec = load_experiment(path)
    async with open_engine(store or MemoryStore()) as eng:
        return await eng.run(spec, source=str(path), run_id=run_id)


def keystone_spec(replicas: int, cases: int = 6) -> str:
    """A Keystone spec in its users' vocabulary: a CLI agent at ./bin/my-agent, `replicas` per case."""
    head = (
        "name: fix-failing-test\nagent:\n  type: cli\n  binary: ./bin/my-agent\n"
        f"parallelism:\n  replicas: {replicas}\ncases:\n"
    )
    rows = (f'  - {{ id: scenario-{i:03d}, prompt: "fix test {i:03d}" }}' for i in range(cases))
    return head + "\n".join(rows)


def write_script(path: Path, body: str) -> Path:
    """An executable shell script (an agent or a verifier a user keeps beside the experiment)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return path
