"""Every command engine prints for a person to run runs as printed: the rerun of each failing
scenario (terminal report and JSON), the `next:` hints, for a tuning session, a narrowed run and a
run from a copy of an experiment file kept beside the store (as `make demo-llm` runs on another
port). Each is run through a shell with the venv's `engine` on the PATH, from another folder."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from engine.events.commands import engine_command
from engine.store.projections.scenarios import glob_literal
from tests.conftest import engine_env

ROOT = Path(__file__).resolve().parent.parent
# a command on its own line, after an optional label ("next:", "continue it:")
PRINTED = re.compile(r"^\s*(?:[a-z][a-z ]*:\s+)?(engine \S.*?)\s*$")


def engine_bin(tmp_path: Path) -> Path:
    """The folder holding `engine`: the venv's, else a stand-in running this interpreter's engine."""
    venv = Path(sys.executable).parent
    if (venv / "engine").exists():
        return venv
    shim = tmp_path / "bin"
    shim.mkdir(exist_ok=True)
    (shim / "engine").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m engine.cli.main "$@"\n')
    (shim / "engine").chmod(0o755)
    return shim


def shell(command: str, cwd: Path, bin_dir: Path) -> subprocess.CompletedProcess[str]:
    env = engine_env(PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("ENGINE_STORE", None)
    return subprocess.run(command, shell=True, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def printed_commands(text: str) -> list[str]:
    return [found[1] for line in text.splitlines() if (found := PRINTED.match(line))]


def run_and_collect(args: str, cwd: Path, bin_dir: Path) -> tuple[list[str], dict[str, Any]]:
    """The commands a run prints (terminal), and its JSON report."""
    shown = shell(f"engine run {args}", cwd, bin_dir)
    assert shown.returncode == 0, shown.stderr
    commands = printed_commands(shown.stdout + shown.stderr)
    run_id = next(c for c in commands if c.startswith("engine report")).split()[2]
    store = cwd / "st"
    report = json.loads(shell(f"engine report {run_id} --json --store {store}", cwd, bin_dir).stdout)
    return commands, report


def check_reruns(report: dict[str, Any], printed: list[str], cwd: Path, bin_dir: Path, sample: int) -> int:
    """Each printed rerun is one of the report's; a sample of them (one per variant first) runs and
    finds the scenario as it was (same seeds, same verdict)."""
    verdicts = {(s["variant"], s["case"]): s["verdict"] for s in report["scenarios"]}
    reruns = report["reproducers"]
    assert reruns, "the run should have failing scenarios to rerun"
    stored = {r["command"] for r in reruns}
    assert [c for c in printed if c.startswith("engine run")] and all(
        c in stored for c in printed if c.startswith("engine run")
    )
    firsts = {r["variant"]: r for r in reversed(reruns)}
    chosen = list(firsts.values())[:sample]
    for found in chosen:
        ran = shell(f"{found['command']} --json -q", cwd, bin_dir)
        assert ran.returncode == 0, (found["command"], ran.stderr)
        again = json.loads(ran.stdout)
        key = (found["variant"], found["case"])
        scenario = [s for s in again["scenarios"] if (s["variant"], s["case"]) == key]
        assert scenario and scenario[0]["verdict"] == verdicts[key]
    return len(chosen)


def check_hints(printed: list[str], cwd: Path, bin_dir: Path) -> None:
    hints = [c for c in printed if not c.startswith("engine run")]
    assert {c.split()[1] for c in hints} >= {"report", "export"}
    for command in hints:
        ran = shell(command, cwd, bin_dir)
        assert ran.returncode == 0, (command, ran.stderr)


@pytest.fixture
def where(tmp_path: Path) -> tuple[Path, Path]:
    elsewhere = tmp_path / "elsewhere"  # commands run from another folder than the run's
    elsewhere.mkdir()
    return elsewhere, engine_bin(tmp_path)


def test_a_tuning_sessions_reruns_and_hints_run_as_printed(tmp_path: Path, where: tuple[Path, Path]) -> None:
    cwd, bin_dir = where
    printed, report = run_and_collect(f"{ROOT}/examples/tune.toml --store {cwd / 'st'}", cwd, bin_dir)
    variants = {r["variant"] for r in report["reproducers"]}
    assert "baseline" in variants and any("=" in v for v in variants)  # the session's own names
    assert check_reruns(report, printed, cwd, bin_dir, sample=4) == 4
    check_hints(printed, cwd, bin_dir)


def test_a_narrowed_runs_reruns_and_hints_run_as_printed(tmp_path: Path, where: tuple[Path, Path]) -> None:
    cwd, bin_dir = where
    args = f"{ROOT}/examples/quickstart.toml --case '*' --variant hot --variant baseline --seed 42"
    printed, report = run_and_collect(f"{args} --store {cwd / 'st'}", cwd, bin_dir)
    check_reruns(report, printed, cwd, bin_dir, sample=2)
    check_hints(printed, cwd, bin_dir)


def demo_llm() -> Any:
    spec = importlib.util.spec_from_file_location("demo_llm", ROOT / "examples" / "demo_llm.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_run_from_a_copied_file_reruns_as_printed(tmp_path: Path, where: tuple[Path, Path]) -> None:
    """`make demo-llm` on another port runs a copy of each example: the copy stays beside the store,
    so the reruns the run stored name a file that is still there."""
    cwd, bin_dir = where
    demo = demo_llm()
    assert demo.experiment_file(demo.EXAMPLES[0], demo.DEFAULT_PORT, str(cwd / "st")) == demo.EXAMPLES[0]
    copied = demo.experiment_file(demo.EXAMPLES[0], 9, str(cwd / "st"))
    assert copied.parent == cwd / "st-demo-llm" and "127.0.0.1:9/" in copied.read_text()
    local = copied.with_name("quickstart-local.toml")  # the same path scheme, on the embedded model
    shutil.copy(ROOT / "examples" / "quickstart.toml", local)
    printed, report = run_and_collect(f"{local} --store {cwd / 'st'}", cwd, bin_dir)
    assert all(str(local) in r["command"] for r in report["reproducers"])
    check_reruns(report, printed, cwd, bin_dir, sample=1)


def test_commands_are_quoted_for_a_shell_and_a_case_id_is_matched_literally() -> None:
    command = engine_command("run", "/a b/exp.toml", "--case", glob_literal("c*[1]?"), "--variant", "t=0.2")
    assert command == "engine run '/a b/exp.toml' --case 'c[*][[]1][?]' --variant t=0.2"
    import fnmatch

    assert fnmatch.fnmatchcase("c*[1]?", glob_literal("c*[1]?"))
    assert not fnmatch.fnmatchcase("cX[1]Y", glob_literal("c*[1]?"))
