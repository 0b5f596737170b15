"""`make demo-llm` end to end (slow: a real model): examples/demo_llm.py starts llama.cpp's server with
SmolLM2-135M, runs the quickstart and the judge example, and at least 90% of the tiny judge's answers
(rubric and pairwise) must be readable: its `answer_format` holds them to a JSON Schema."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import engine_env
from tests.test_real_model import free_port, gguf_path

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parent.parent


def test_demo_llm_runs_both_examples_and_the_judge_answers_parse(tmp_path: Path) -> None:
    gguf_path()  # skips, with the reason, where the model packages are missing
    demo = [sys.executable, str(ROOT / "examples" / "demo_llm.py"), "--port", str(free_port())]
    ran = subprocess.run([*demo, "--store", str(tmp_path / "st"), "--json"], cwd=tmp_path, env=engine_env(),
                         capture_output=True, timeout=1200)  # fmt: skip
    assert ran.returncode == 0, ran.stderr.decode()[-2000:]
    figures = json.loads(ran.stdout.decode().strip().splitlines()[-1])
    assert figures["judge_answers"] == 2 * 5 * 2 + 5 * 2  # rubric: every trial; pairwise: each short trial
    assert figures["parse_rate"] >= 0.9, figures
    # the streamed run: a time to first token per variant, from llama.cpp's server-sent events
    assert set(figures["ttft_ms"]) == {"short-system", "long-system"} and min(figures["ttft_ms"].values()) > 0
    assert b"llm-quickstart-greedy-vs-hot" in ran.stdout and b"Pairwise judge" in ran.stdout
