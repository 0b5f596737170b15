"""A source tool's file names its model or agent under test: Zeph's [llm] is the target, and a file that
names none is refused (exit 2, the lines to add) instead of running engine's toy `local` model."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from engine.errors import InputError
from engine.input.loader import load_experiment
from tests.compat.helpers import run_file, write_script
from tests.conftest import run_engine
from tests.fakes.openai_server import open_fake_openai

ZEPH = """
[agent]
name = "Zeph"

[llm]
provider = "ollama"
base_url = "{url}"
model = "qwen3:8b"

[memory]
sqlite_path = "./data/zeph.db"

[experiments]
enabled = true
eval_model = "qwen3:32b"
benchmark_file = "benchmarks/eval.toml"
max_experiments = 3
min_improvement = 0.5
"""
TOPICS = ("TCP", "UDP", "QUIC", "DNS", "BGP", "ARP", "NAT", "TLS")
BENCHMARK = "".join(f'[[cases]]\nprompt = "Explain {t}"\n' for t in TOPICS)


def zeph_answer(body: dict[str, Any]) -> str:
    """Subject: answers at its temperature. Judge (eval_model): cool answers score 9, hot ones 3."""
    text = " ".join(str(m.get("content", "")) for m in body["messages"])
    if body["model"] == "qwen3:32b":
        hot = float(re.search(r"temperature (\d\.\d+)", text).group(1)) > 0.5  # type: ignore[union-attr]
        score = 3 if hot else 9
        names = ("accuracy", "completeness", "clarity", "relevance")
        return json.dumps({"scores": {n: score for n in names}, "reason": "ok"})
    return f"answered at temperature {float(body.get('temperature', 0.7)):.2f}"


def zeph_project(folder: Path, config: str) -> Path:
    (folder / "benchmarks").mkdir(parents=True, exist_ok=True)
    (folder / "benchmarks" / "eval.toml").write_text(BENCHMARK)
    (folder / "config.toml").write_text(config)
    return folder / "config.toml"


def test_zeph_llm_providers_map_to_targets(tmp_path: Path) -> None:
    ollama = load_experiment(zeph_project(tmp_path, ZEPH.format(url="http://localhost:11434")))
    assert (ollama.target.kind, ollama.target.base_url, ollama.target.model) == (  # type: ignore[union-attr]
        "openai", "http://localhost:11434/v1", "qwen3:8b",
    )  # fmt: skip
    assert ollama.graders[0].judge == {"model": "qwen3:32b"}  # the same endpoint, eval_model as the judge
    openai = ZEPH.replace('provider = "ollama"', 'provider = "openai"') + (
        '\n[llm.openai]\nbase_url = "https://api.openai.com/v1"\nmodel = "gpt-5.2"\nmax_tokens = 4096\n'
    )
    spec = load_experiment(zeph_project(tmp_path, openai))
    assert (spec.target.model, spec.target.api_key_env, spec.params["max_tokens"]) == (  # type: ignore[union-attr]
        "gpt-5.2", "ZEPH_OPENAI_API_KEY", 4096,
    )  # fmt: skip
    groq = ZEPH.replace('provider = "ollama"', 'provider = "groq"') + (
        '\n[[llm.compatible]]\nname = "groq"\nbase_url = "https://api.groq.com/openai/v1"\n'
        'model = "llama-3.3"\n'
    )
    spec = load_experiment(zeph_project(tmp_path, groq))
    assert (spec.target.base_url, spec.target.api_key_env) == (  # type: ignore[union-attr]
        "https://api.groq.com/openai/v1", "ZEPH_COMPATIBLE_GROQ_API_KEY",
    )  # fmt: skip
    claude = ZEPH.replace('provider = "ollama"', 'provider = "claude"') + (
        '\n[llm.cloud]\nmodel = "claude-sonnet-4-5-20250929"\n'
    )
    spec = load_experiment(zeph_project(tmp_path, claude))
    assert (spec.target.kind, spec.target.model) == ("anthropic", "claude-sonnet-4-5-20250929")  # type: ignore[union-attr]
    unified = (
        ZEPH[: ZEPH.index("[llm]")]
        + ZEPH[ZEPH.index("[memory]") :]
        + (
            '\n[[llm.providers]]\ntype = "claude"\nmodel = "c"\n\n'
            '[[llm.providers]]\ntype = "ollama"\nmodel = "qwen3:1.7b"\ndefault = true\n'
        )
    )
    spec = load_experiment(zeph_project(tmp_path, unified))
    assert (spec.target.kind, spec.target.model) == ("openai", "qwen3:1.7b")  # type: ignore[union-attr]


def test_a_zeph_provider_engine_cannot_call_is_refused(tmp_path: Path) -> None:
    file = zeph_project(tmp_path, ZEPH.replace('provider = "ollama"', 'provider = "candle"'))
    with pytest.raises(InputError, match=r"llm.provider: provider 'candle' has no endpoint"):
        load_experiment(file)


async def test_a_zeph_config_runs_against_its_own_llm_section(tmp_path: Path) -> None:
    async with open_fake_openai(answer=zeph_answer) as server:
        report = await run_file(zeph_project(tmp_path, ZEPH.format(url=server.base_url.removesuffix("/v1"))))
    assert report.status == "completed" and not report.errors, report.stop_reason
    models = {r.body["model"] for r in server.requests}
    assert models == {"qwen3:8b", "qwen3:32b"}  # the subject and the judge, both on Zeph's endpoint
    assert all(r.path == "/v1/chat/completions" for r in server.requests)
    # the grid sweeps outward from the default 0.7: 0.6 and 0.8 are hot, 0.5 is the first cool one
    decided = [(v.parameter, v.value, v.accepted) for v in report.variations]
    assert decided == [("temperature", 0.6, False), ("temperature", 0.8, False), ("temperature", 0.5, True)]


def refused(file: Path) -> str:
    done = run_engine("validate", str(file), cwd=file.parent)
    err = done.stderr.decode()
    assert done.returncode == 2 and "Traceback" not in err, err
    assert str(file) in err or file.name in err, err
    return err


def test_a_zeph_config_without_a_model_is_refused_with_the_lines_to_add(tmp_path: Path) -> None:
    config = ZEPH[ZEPH.index("[experiments]") :]
    err = refused(zeph_project(tmp_path, config))
    assert "config.toml: llm: names no model under test" in err
    assert '[llm]\nprovider = "ollama"\nbase_url = "http://localhost:11434"\nmodel = ' in err


def test_other_tools_files_without_a_subject_are_refused(tmp_path: Path) -> None:
    (tmp_path / "cases.jsonl").write_text('{"id": "a", "prompt": "p", "expected": "x"}\n')
    fleet = tmp_path / "tighten.experiment.md"
    fleet.write_text("---\nname: t\nkind: skill\nsuite: cases\ngrader: contains\n---\n")
    assert "target: names no agent to run the variants" in refused(fleet)
    assert 'target: { kind: command, command: ["./agent.sh"] }' in refused(fleet)
    wink = tmp_path / "wink.yaml"
    wink.write_text("name: w\ndataset: cases.jsonl\nexperiments: [{name: baseline}]\n")
    assert 'target: { kind: python, callable: "agent:answer" }' in refused(wink)
    keystone = tmp_path / "spec.yaml"
    keystone.write_text("name: k\nparallelism: {replicas: 2}\ncases: [{id: a, prompt: p, expected: x}]\n")
    assert "agent: names no agent; add the agent block:\nagent:\n  type: cli" in refused(keystone)


def test_an_agentv_experiment_without_a_target_names_the_projects_targets(tmp_path: Path) -> None:
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - {name: codex, provider: cli, command: codex}\n"
        "  - {name: claude, provider: cli, command: c}\n"
    )
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "a.eval.yaml").write_text("tests:\n  - {id: t, input: hi, expected_output: x}\n")
    file = tmp_path / "experiments" / "default.yaml"
    file.parent.mkdir()
    file.write_text("name: baseline\nsuites:\n  - ref: evals/a.eval.yaml\nruns: 2\n")
    err = refused(file)
    assert "target: names no target; add one of .agentv/targets.yaml's (codex, claude):\ntarget: codex" in err


async def test_engines_own_files_keep_the_local_default_and_an_explicit_subject_runs(tmp_path: Path) -> None:
    native = tmp_path / "exp.toml"
    native.write_text('name = "n"\n[[cases]]\nid = "a"\nprompt = "p"\nexpected = "x"\n')
    assert load_experiment(native).target.kind == "local"
    write_script(tmp_path / "agent.sh", "echo x\n")
    fleet = tmp_path / "ok.experiment.md"
    (tmp_path / "cases.jsonl").write_text('{"id": "a", "prompt": "p", "expected": "x"}\n')
    fleet.write_text(
        "---\nname: t\nkind: skill\nsuite: cases\ngrader: contains\n"
        'target: { kind: command, command: ["./agent.sh"] }\n---\n'
    )
    report = await run_file(fleet)
    assert report.variants[0].pass_rate == 1.0
