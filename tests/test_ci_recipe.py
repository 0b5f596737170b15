"""The README's CI recipe, run as written on fresh runners: each job has its own empty store and
working folder, and only the bundle directory travels between jobs (as a CI cache would carry it)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import SAFETY_S, engine_env

ROOT = Path(__file__).resolve().parent.parent


def recipe() -> str:
    text = (ROOT / "README.md").read_text()
    found = re.search(r"<!-- ci-recipe -->\n```sh\n(.*?)```", text, re.S)
    assert found, "README.md lost its CI recipe block"
    return found.group(1)


def suite(temperature: float) -> str:
    cases = "\n".join(
        f'[[cases]]\nid = "c{i:02d}"\nprompt = "Capital of country {i}?"\nexpected = "City{i}"'
        for i in range(16)
    )
    return (
        'name = "capitals-ci"\nseed = 5\n[target]\nkind = "python"\n'
        'callable = "tests.fixtures.agent:capital"\n'
        f"[params]\ntemperature = {temperature}\n[repeat]\ncount = 3\n"
        # the subject answers at once: only a loaded machine could move its latency, and the
        # recipe's verdicts here are about pass rates
        "[gate]\nmin_latency_increase_ms = 60000\n"
        f"{cases}\n"
    )


def job(cache: Path, work: Path, sha: str, temperature: float) -> subprocess.CompletedProcess[str]:
    """One CI job on a fresh runner: restore the cache, run the recipe with bash -e, save the cache."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    (work / "suite.toml").write_text(suite(temperature))
    if (cache / "ci-bundles").exists():
        shutil.copytree(cache / "ci-bundles", work / "ci-bundles")
    env = engine_env(GIT_SHA=sha)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    done = subprocess.run(
        ["bash", "-e", "-c", recipe()], cwd=work, env=env, capture_output=True, text=True, timeout=SAFETY_S
    )
    if done.returncode == 0 and (work / "ci-bundles").exists():
        shutil.rmtree(cache / "ci-bundles", ignore_errors=True)
        shutil.copytree(work / "ci-bundles", cache / "ci-bundles")
    return done


def test_the_recipe_gates_each_job_against_the_last_green_job(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    first = job(cache, tmp_path / "runner", "aaa111", temperature=0.3)
    assert first.returncode == 0, first.stderr
    assert "no green run of 'capitals-ci' yet" in first.stdout  # the pipeline's very first job
    assert [p.name for p in (cache / "ci-bundles").iterdir()] == ["ci-aaa111.bundle"]

    second = job(cache, tmp_path / "runner", "bbb222", temperature=0.3)  # unchanged code: passes
    assert second.returncode == 0, second.stdout + second.stderr
    assert "ci-aaa111" in second.stdout and "REGRESSED" not in second.stdout
    assert sorted(p.name for p in (cache / "ci-bundles").iterdir()) == [
        "ci-aaa111.bundle",
        "ci-bbb222.bundle",
    ]

    broken = job(cache, tmp_path / "runner", "ccc333", temperature=1.0)  # a regression: the gate fails
    assert broken.returncode == 1, broken.stdout + broken.stderr
    assert "ci-bbb222" in broken.stdout  # against the newest green job, from the bundles alone
    assert not (cache / "ci-bundles" / "ci-ccc333.bundle").exists()  # never a baseline


def test_a_run_marked_red_travels_and_is_never_a_baseline(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    assert job(cache, tmp_path / "runner", "aaa111", temperature=0.3).returncode == 0
    bundle = cache / "ci-bundles" / "ci-aaa111.bundle"
    store = tmp_path / "desk"
    env = engine_env()
    cli = [sys.executable, "-m", "engine.cli.main"]
    for args in (["import", str(bundle)], ["mark", "ci-aaa111", "red"]):
        assert subprocess.run([*cli, *args, "--store", str(store)], env=env, timeout=SAFETY_S).returncode == 0
    out = [*cli, "export", "ci-aaa111", "--format", "bundle", "--out", str(bundle), "--store", str(store)]
    assert subprocess.run(out, env=env, timeout=SAFETY_S).returncode == 0
    later = job(cache, tmp_path / "runner", "bbb222", temperature=0.3)
    assert later.returncode == 0 and "no green run of 'capitals-ci' yet" in later.stdout
