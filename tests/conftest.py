"""Shared helpers: run the real `engine` CLI in a subprocess against a real LMDB store."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def engine_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    env.update(extra)
    return env


def engine_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "engine.cli.main", *args]


def run_engine(*args: str, cwd: Path, timeout: float = 60, **env: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        engine_cmd(*args), cwd=cwd, env=engine_env(**env), capture_output=True, timeout=timeout
    )


@pytest.fixture
def write_experiment(tmp_path: Path):
    def write(text: str, name: str = "exp.toml") -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    return write
