"""The provider plugin example (examples/plugins/gemini-native): installed by pip, found through its
entry point, keeping the kind contract, and run by `engine run` against a fake server speaking
Gemini's generateContent (its path with the model, its key header, its body and usage)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from engine.actors.kind_contract import check_target_kind
from engine.events.targets import TARGETS
from tests.conftest import ROOT, engine_cmd, engine_env
from tests.fakes.openai_server import open_fake_openai
from tests.test_plugins import on_path

EXAMPLE = ROOT / "examples" / "plugins" / "gemini-native"
KEY = "gk-plugin-secret-55"


@pytest.fixture(scope="module")
def provider_plugin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example installed by pip (no index, no build isolation: offline) into a folder."""
    work = tmp_path_factory.mktemp("provider")
    source = shutil.copytree(EXAMPLE, work / "source")
    site = work / "site"
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation"]
    subprocess.run([*pip, "--no-index", "--target", str(site), str(source)], check=True, capture_output=True)
    return site


def test_the_provider_plugin_keeps_the_contract(
    provider_plugin: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(provider_plugin))
    TARGETS.rescan()
    try:
        kind = TARGETS.get("gemini_native")
        assert kind is not None and kind.speaks_http  # found through its entry point
        check_target_kind(kind)
    finally:
        monkeypatch.undo()
        TARGETS.rescan()


async def test_the_provider_plugin_runs_against_generate_content(
    provider_plugin: Path, tmp_path: Path
) -> None:
    experiment = (EXAMPLE / "experiment.toml").read_text()
    async with open_fake_openai(answer=lambda body: "6 x 7 = 42") as server:
        base_url = f"http://127.0.0.1:{server.port}/v1beta"
        (tmp_path / "exp.toml").write_text(
            experiment.replace("[target]\n", f'[target]\nbase_url = "{base_url}"\n')
        )
        env = engine_env(PYTHONPATH=on_path(provider_plugin), GEMINI_API_KEY=KEY)
        command = engine_cmd("run", "exp.toml", "--json", "--store", "st")
        ran = await trio.run_process(
            command, cwd=tmp_path, env=env, capture_stdout=True, capture_stderr=True, check=False
        )
    assert ran.returncode == 0, ran.stderr.decode()
    report = json.loads(ran.stdout)
    assert [v["pass_rate"] for v in report["variants"]] == [1.0, 1.0]
    assert [v["tokens"] for v in report["variants"]] == [{"in": 5, "out": 5}] * 2  # usageMetadata, read
    plain, brief = sorted(server.requests, key=lambda r: "systemInstruction" in r.body)  # any order
    assert {plain.path, brief.path} == {"/v1beta/models/gemini-2.0-flash:generateContent"}
    assert plain.headers["x-goog-api-key"] == KEY and "authorization" not in plain.headers
    assert brief.body["systemInstruction"] == {"parts": [{"text": "Answer in as few words as you can."}]}
    assert brief.body["generationConfig"]["maxOutputTokens"] == 32
    assert brief.body["contents"] == [{"role": "user", "parts": [{"text": "What is 6 x 7?"}]}]
    assert KEY not in (tmp_path / "exp.toml").read_text()
