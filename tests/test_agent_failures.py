"""Command agents that hang or crash, through the engine: recorded once, by class, never graded as output."""

from __future__ import annotations

from pathlib import Path

from engine.api import open_engine, spec_from_dict
from engine.events import kinds as k
from engine.events.codec import decode


def agent_spec(command: str, graders: list[dict] | None = None, **target: object) -> object:
    return spec_from_dict(
        {
            "name": "agents",
            "target": {"kind": "command", "command": command, "max_retries": 3, **target},
            "cases": [{"id": "c0", "prompt": "fix it", "expected": "fixed"}],
            "graders": graders or [{"kind": "contains"}],
        }
    )


def failures(eng: object, run_id: str) -> list[k.TrialFailed]:
    events = [decode(data) for _, data in eng.log.read_run(run_id, tags={"trial.failed"})]  # type: ignore[attr-defined]
    return [e for e in events if isinstance(e, k.TrialFailed)]


async def test_a_hung_agent_is_timed_out_once_not_retried(tmp_path: Path) -> None:
    async with open_engine(tmp_path) as eng:
        report = await eng.run(agent_spec("sleep 30", timeout_s=0.5))
        (failed,) = failures(eng, report.run_id)
    assert (failed.error_class, failed.attempts) == ("timeout", 1)
    assert report.errors[0].error_class == "timeout" and report.variants[0].errors == 1


async def test_a_crashed_agent_is_an_agent_exit_error_not_a_failed_grade(tmp_path: Path) -> None:
    async with open_engine(tmp_path) as eng:
        report = await eng.run(agent_spec("echo half; echo 'segfault in tool' >&2; exit 139"))
        (failed,) = failures(eng, report.run_id)
        graded = list(eng.log.read_run(report.run_id, tags={"trial.graded"}))
    assert (failed.error_class, failed.exit_code, failed.attempts) == ("agent_exit", 139, 1)
    assert "segfault in tool" in failed.message and not graded
    variant = report.variants[0]
    assert variant.cases.errors == 1 and variant.cases.failed == 0 and variant.pass_rate is None


async def test_an_exit_code_grader_grades_the_nonzero_exit_instead(tmp_path: Path) -> None:
    graders = [{"kind": "contains"}, {"kind": "exit_code", "gate": True}]
    async with open_engine(tmp_path) as eng:
        crashed = await eng.run(agent_spec("echo fixed; exit 2", graders))
        clean = await eng.run(agent_spec("echo fixed", graders))
    assert crashed.variants[0].errors == 0 and crashed.variants[0].pass_rate == 0.0
    assert clean.variants[0].pass_rate == 1.0


async def test_retrying_an_agent_exit_is_opt_in(tmp_path: Path) -> None:
    marker = tmp_path / "tried"
    flaky = f'if [ -e "{marker}" ]; then echo fixed; else touch "{marker}"; exit 1; fi'
    async with open_engine(tmp_path / "store") as eng:
        report = await eng.run(agent_spec(flaky, retry_on=["agent_exit"]))
    assert report.variants[0].pass_rate == 1.0 and report.variants[0].errors == 0


async def test_a_bad_metrics_file_is_a_trial_error_not_a_crashed_run(tmp_path: Path) -> None:
    broken = 'echo fixed; echo \'{"tokens_in": 1e30}\' > "$ENGINE_METRICS_FILE"'
    async with open_engine(tmp_path) as eng:
        report = await eng.run(agent_spec(broken))
        (failed,) = failures(eng, report.run_id)
    assert failed.error_class == "bad_metrics" and "tokens_in" in failed.message
    assert report.status == "completed"
