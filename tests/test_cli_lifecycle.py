"""A live run seen from other processes: status, cancel, signals, and kill -9 then resume."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

from engine.events import kinds as k
from engine.events.codec import decode
from engine.store.log import EventLog
from tests.conftest import engine_cmd, engine_env, run_engine
from tests.test_cli_run import experiment

VOLATILE = ("run_id", "latency_ms")


def start(args: list[str], cwd: Path, latency_ms: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        engine_cmd(*args),
        cwd=cwd,
        env=engine_env(AGENT_LATENCY_MS=str(latency_ms)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def wait_for_progress(cwd: Path, run_id: str, at_least: int, timeout: float = 30) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = run_engine("status", run_id, "--json", "--store", "st", cwd=cwd)
        if result.returncode == 0:
            status = json.loads(result.stdout)
            if status["trials_done"] >= at_least:
                return status
        time.sleep(0.1)
    raise AssertionError(f"run {run_id} made no progress")


def strip_volatile(value: object) -> object:
    if isinstance(value, dict):
        return {key: strip_volatile(v) for key, v in value.items() if key not in VOLATILE}
    if isinstance(value, list):
        return [strip_volatile(v) for v in value]
    return value


def completions_per_trial(store: Path, run_id: str) -> Counter[tuple[str, str, int]]:
    with EventLog(store) as log:
        events = [decode(data) for _, data in log.read_run(run_id, tags={"trial.completed"})]
    return Counter((e.variant, e.case, e.repeat) for e in events if isinstance(e, k.TrialCompleted))


def test_cancel_from_another_process_keeps_partial_results(tmp_path: Path, write_experiment) -> None:
    file = write_experiment(experiment(cases=40, repeats=2, extra="[execution]\nconcurrency = 2\n"))
    proc = start(["run", str(file), "--run-id", "live", "--json", "--store", "st"], tmp_path, latency_ms=100)
    status = wait_for_progress(tmp_path, "live", at_least=2)
    assert status["status"] == "running"
    # resuming a run that a live process is executing would run its trials twice: refused
    second = run_engine("run", "--resume", "live", "--store", "st", cwd=tmp_path)
    assert second.returncode == 2 and b"still running" in second.stderr and b"Traceback" not in second.stderr
    cancelled = run_engine("cancel", "live", "--store", "st", cwd=tmp_path)
    assert cancelled.returncode == 0
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 3, err.decode()
    report = json.loads(out)
    assert report["status"] == "cancelled" and report["is_partial"]
    assert 2 <= report["trials_done"] < report["trials_total"]
    stored = run_engine("report", "live", "--json", "--store", "st", cwd=tmp_path)
    assert stored.stdout == out
    assert max(completions_per_trial(tmp_path / "st", "live").values()) == 1
    again = run_engine("cancel", "live", "--store", "st", cwd=tmp_path)
    assert again.returncode == 0 and b"already cancelled" in again.stdout


def test_sigint_stops_gracefully(tmp_path: Path, write_experiment) -> None:
    file = write_experiment(experiment(cases=40, repeats=2, extra="[execution]\nconcurrency = 2\n"))
    proc = start(["run", str(file), "--run-id", "sig", "--json", "--store", "st"], tmp_path, latency_ms=100)
    wait_for_progress(tmp_path, "sig", at_least=2)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err.decode()
    report = json.loads(out)
    assert report["status"] == "cancelled" and report["is_partial"]
    assert b"Traceback" not in err


def test_kill_9_then_resume_loses_nothing_and_duplicates_nothing(tmp_path: Path, write_experiment) -> None:
    file = write_experiment(experiment(cases=24, repeats=2, extra="[execution]\nconcurrency = 2\n"))
    reference = run_engine("run", str(file), "--run-id", "ref", "--json", "--store", "st", cwd=tmp_path)
    assert reference.returncode == 0, reference.stderr.decode()
    expected = strip_volatile(json.loads(reference.stdout))
    for point, at_least in enumerate((1, 20, 45)):
        run_id = f"killed-{point}"
        proc = start(
            ["run", str(file), "--run-id", run_id, "--json", "--store", "st"], tmp_path, latency_ms=40
        )
        wait_for_progress(tmp_path, run_id, at_least=at_least)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=10)
        interrupted = json.loads(run_engine("list", "--json", "--store", "st", cwd=tmp_path).stdout)
        assert {r["run_id"]: r["status"] for r in interrupted}[run_id] == "interrupted"
        resumed = run_engine("run", "--resume", run_id, "--json", "--store", "st", cwd=tmp_path)
        assert resumed.returncode == 0, resumed.stderr.decode()
        assert strip_volatile(json.loads(resumed.stdout)) == expected
        counts = completions_per_trial(tmp_path / "st", run_id)
        assert len(counts) == 2 * 24 * 2 and max(counts.values()) == 1


def test_schedule_process_starts_and_stops_on_sigint(tmp_path: Path, write_experiment) -> None:
    file = write_experiment(experiment(cases=2, repeats=1))
    proc = start(["run", str(file), "--schedule", "0 3 * * *", "--store", "st"], tmp_path, latency_ms=0)
    assert proc.stderr is not None
    first = proc.stderr.readline()
    assert b"on schedule '0 3 * * *'" in first
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 130 and b"Traceback" not in err


def test_bad_cron_exits_2(tmp_path: Path, write_experiment) -> None:
    file = write_experiment(experiment(cases=2, repeats=1, extra='[schedule]\ncron = "nightly"\n'))
    result = run_engine("run", str(file), "--store", "st", cwd=tmp_path)
    assert result.returncode == 2 and b"cron" in result.stderr and b"Traceback" not in result.stderr
