"""The shipped tuning example end to end, the default search space, and what status says of a session."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from engine.api import spec_from_dict
from engine.errors import InputError

ROOT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "engine.cli.main"]


def engine(*args: str, store: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args, "--store", str(store)], capture_output=True, text=True, timeout=300, cwd=ROOT
    )


def test_the_tuning_example_accepts_a_real_improvement(tmp_path: Path) -> None:
    store = tmp_path / "store"
    done = engine("run", "examples/tune.toml", "--json", "-q", store=store)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    accepted = [v for v in report["variations"] if v["accepted"]]
    assert accepted and all(v["delta"] >= 0.05 and v["p_value"] < 0.05 for v in accepted)
    # each variation's record: what evaluating it cost, and who started the session
    assert all(
        v["tokens_used"] > 0 and v["latency_ms"] > 0 and v["origin"] == "manual" for v in report["variations"]
    )
    best = json.loads(engine("best", "--json", store=store).stdout)
    assert [b["parameter"] for b in best] == ["temperature"]
    status = json.loads(engine("status", report["run_id"], "--json", store=store).stdout)
    assert status["variations"] == len(report["variations"]) and status["accepted"] == len(accepted)
    assert status["max_experiments"] == 10 and status["elapsed_s"] >= 0
    listing = engine("list", store=store).stdout
    assert report["run_id"] in listing and " 0 " not in listing  # no "0 trials" for a session
    # the report, `best` and `promote` agree: the session's accepted best is the winner
    assert report["winner"] == accepted[-1]["variant"] and report["winner_significant"]
    promoted = engine("promote", report["run_id"], "--to", str(tmp_path / "agent.toml"), store=store)
    assert promoted.returncode == 0, promoted.stderr
    assert f"temperature = {best[0]['value']}" in (tmp_path / "agent.toml").read_text()


def test_a_session_without_parameters_searches_the_default_space() -> None:
    session = {"name": "t", "kind": "tune", "cases": [{"id": "a", "prompt": "p", "expected": "x"}]}
    spec = spec_from_dict({**session, "target": {"kind": "openai", "base_url": "http://127.0.0.1:9/v1"}})
    assert spec.tune is not None
    space = {p.name: (p.min, p.max, p.step, p.default) for p in spec.tune.parameters}
    assert space == {
        "temperature": (0.0, 1.0, 0.1, 0.7),
        "top_p": (0.1, 1.0, 0.05, 0.9),
        "top_k": (1, 100, 5, 40),
        "frequency_penalty": (-2.0, 2.0, 0.2, 0.0),
        "presence_penalty": (-2.0, 2.0, 0.2, 0.0),
    }
    assert [p.integer for p in spec.tune.parameters] == [False, False, True, False, False]
    local = spec_from_dict(session)
    assert local.tune is not None  # the embedded model reads two of them: only those are searched
    assert [p.name for p in local.tune.parameters] == ["temperature", "top_p"]


@pytest.mark.parametrize(
    ("tune", "field", "expected"),
    [
        ({"min_improvement": 0.5 * 10}, "tune.min_improvement", "scores run from 0 to 1"),
        ({"auto_apply": True}, "tune.apply_to", "file to write accepted values to"),
        ({"parameters": []}, "tune.parameters", "at least one parameter range"),
    ],
)
def test_tuning_settings_that_could_never_work_are_refused(
    tune: dict[str, object], field: str, expected: str
) -> None:
    with pytest.raises(InputError) as caught:
        spec_from_dict(
            {
                "name": "t",
                "kind": "tune",
                "cases": [{"id": "a", "prompt": "p", "expected": "x"}],
                "tune": tune,
            }
        )
    assert caught.value.field == field and expected in caught.value.expected


def test_max_experiments_from_the_command_line_caps_the_session(tmp_path: Path) -> None:
    done = engine("run", "examples/tune.toml", "--max-experiments", "2", "--json", "-q", store=tmp_path / "s")
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)["variations"]) == 2
