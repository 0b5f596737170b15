"""A live run seen from other processes: status, cancel, signals, and kill -9 then resume.

No test here races the clock. The engine runs in a real subprocess against the fake
OpenAI-compatible server in this test's own Trio loop, with the server's gate held: an answer
leaves only when the test releases it, and the test learns that the engine has moved on from the
requests that arrive (events, not polls). With one executor worker, the scheduler keeps at most
two trials outstanding and sends trial i only once trial i - 2 is durably graded, so when request i
arrives trials 0..i-2 are in the log; what else made it is read from the log itself.
"""

from __future__ import annotations

import json
import signal
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import trio

from engine.events import kinds as k
from engine.events.codec import decode
from engine.store.open import open_event_log
from tests.conftest import STARTED, engine_cmd, engine_env, run_engine
from tests.fakes.openai_server import FakeOpenAI, open_fake_openai

VOLATILE = ("run_id", "latency_ms")
CASES, REPEATS = 6, 2
TOTAL = 2 * CASES * REPEATS
SAFETY_S = 300  # a hang guard only: nothing waits on time


def answer(body: dict[str, Any]) -> str:
    """Deterministic per trial (the body carries the trial's seed): right about two times in three."""
    prompt = body["messages"][-1]["content"]
    city = prompt.split()[-1].rstrip("?")
    return f"It is {city}." if (body["seed"] + int(body.get("temperature", 0) * 10)) % 3 else "Not sure."


def experiment(base_url: str) -> str:
    cases = "\n".join(
        f'[[cases]]\nid = "c{i}"\nprompt = "Which city is number {i}? City{i}?"\nexpected = "City{i}"'
        for i in range(CASES)
    )
    return (
        f'name = "lifecycle"\nseed = 5\n[target]\nkind = "openai"\nbase_url = "{base_url}"\nmodel = "m"\n'
        f"max_retries = 0\n[execution]\nconcurrency = 1\n"
        f'[[variants]]\nname = "warm"\nparams = {{ temperature = 0.7 }}\n'
        f'[[variants]]\nname = "cold"\nparams = {{ temperature = 0.1 }}\n'
        f"[repeat]\ncount = {REPEATS}\n{cases}\n"
    )


class Engine:
    """The engine CLI in a subprocess; its output goes to files read once it has exited."""

    def __init__(self, cwd: Path, name: str) -> None:
        self.cwd, self.out, self.err = cwd, cwd / f"{name}.out", cwd / f"{name}.err"
        self.proc: trio.Process | None = None

    async def start(self, *args: str) -> Engine:
        with self.out.open("wb") as out, self.err.open("wb") as err:
            self.proc = await trio.lowlevel.open_process(
                engine_cmd(*args), cwd=self.cwd, env=engine_env(), stdout=out, stderr=err
            )
        STARTED.append(self.proc)
        return self

    async def finish(self) -> tuple[int, str, str]:
        assert self.proc is not None
        with trio.fail_after(SAFETY_S):
            code = await self.proc.wait()
        return code, self.out.read_text(), self.err.read_text()

    def signal(self, sig: int) -> None:
        assert self.proc is not None
        self.proc.send_signal(sig)


def strip_volatile(value: object) -> object:
    if isinstance(value, dict):
        return {key: strip_volatile(v) for key, v in value.items() if key not in VOLATILE}
    if isinstance(value, list):
        return [strip_volatile(v) for v in value]
    return value


def events_of(store: Path, run_id: str, *types: type) -> list[Any]:
    with open_event_log(store) as log:
        found = [decode(data) for _, data in log.read_run(run_id)]
    return [e for e in found if isinstance(e, types)]


def completions_per_trial(store: Path, run_id: str) -> Counter[tuple[str, str, int]]:
    return Counter((e.variant, e.case, e.repeat) for e in events_of(store, run_id, k.TrialCompleted))


def statuses(cwd: Path) -> dict[str, str]:
    listed = run_engine("list", "--json", "--store", "st", cwd=cwd, timeout=SAFETY_S)
    return {r["run_id"]: r["status"] for r in json.loads(listed.stdout)}


async def reference_report(server: FakeOpenAI, cwd: Path) -> object:
    server.gate.open()
    engine = await Engine(cwd, "ref").start("run", "exp.toml", "--run-id", "ref", "--json", "--store", "st")
    code, out, err = await engine.finish()
    assert code == 0, err
    return strip_volatile(json.loads(out))


async def kill_after(server: FakeOpenAI, cwd: Path, run_id: str, released: int) -> int:
    """Start a run, let `released` answers out, kill -9 it once its next request arrived; returns the
    requests the server had seen by then."""
    before = len(server.requests)
    server.gate.hold()
    engine = await Engine(cwd, run_id).start("run", "exp.toml", "--run-id", run_id, "--json", "--store", "st")
    server.gate.release(released)
    await server.wait_received(before + released + 1)  # it is waiting on the next answer now
    engine.signal(signal.SIGKILL)
    await engine.finish()
    return len(server.requests)


async def test_kill_9_then_resume_loses_nothing_and_duplicates_nothing(tmp_path: Path) -> None:
    async with open_fake_openai(answer=answer) as server:
        (tmp_path / "exp.toml").write_text(experiment(server.base_url))
        expected = await reference_report(server, tmp_path)
        # at the start (no answer out), in the middle, and with one trial left
        for point, released in enumerate((0, TOTAL // 2, TOTAL - 1)):
            run_id = f"killed-{point}"
            await kill_after(server, tmp_path, run_id, released)
            assert statuses(tmp_path)[run_id] == "interrupted"
            durable = len(completions_per_trial(tmp_path / "st", run_id))
            # what the scheduler's bound guarantees, and at most what the server answered
            assert max(0, released - 1) <= durable <= released, (point, durable)
            server.gate.open()
            calls_before = len(server.requests)
            resume = Engine(tmp_path, f"resume-{point}")
            await resume.start("run", "--resume", run_id, "--json", "--store", "st")
            code, out, err = await resume.finish()
            assert code == 0, err
            # only the trials with no completion event were called again
            assert len(server.requests) - calls_before == TOTAL - durable
            assert strip_volatile(json.loads(out)) == expected
            counts = completions_per_trial(tmp_path / "st", run_id)
            assert len(counts) == TOTAL and max(counts.values()) == 1


async def stopped_run(server: FakeOpenAI, cwd: Path, run_id: str, released: int, stop: Any) -> tuple:
    """A run held after `released` answers, stopped by `stop(engine)`; its exit code, report, log."""
    server.gate.hold()
    before = len(server.requests)
    engine = await Engine(cwd, run_id).start("run", "exp.toml", "--run-id", run_id, "--json", "--store", "st")
    server.gate.release(released)
    await server.wait_received(before + released + 1)
    await stop(engine)
    code, out, err = await engine.finish()
    server.gate.open()
    return code, json.loads(out) if out else None, err


async def test_cancel_from_another_process_keeps_partial_results(tmp_path: Path) -> None:
    async def cancel(engine: Engine) -> None:
        # resuming a run that a live process is executing would run its trials twice: refused
        second = run_engine("run", "--resume", "live", "--store", "st", cwd=tmp_path, timeout=SAFETY_S)
        assert second.returncode == 2 and b"still running" in second.stderr
        assert b"Traceback" not in second.stderr
        assert run_engine("cancel", "live", "--store", "st", cwd=tmp_path, timeout=SAFETY_S).returncode == 0

    async with open_fake_openai(answer=answer) as server:
        (tmp_path / "exp.toml").write_text(experiment(server.base_url))
        code, report, err = await stopped_run(server, tmp_path, "live", 5, cancel)
    assert code == 3, err  # stopped by a cancel request
    assert report["status"] == "cancelled" and report["is_partial"]
    graded = events_of(tmp_path / "st", "live", k.TrialGraded)
    assert 4 <= report["trials_done"] == len(graded) <= 5  # the held trials never completed
    stored = run_engine("report", "live", "--json", "--store", "st", cwd=tmp_path, timeout=SAFETY_S)
    assert json.loads(stored.stdout) == report
    assert max(completions_per_trial(tmp_path / "st", "live").values()) == 1
    again = run_engine("cancel", "live", "--store", "st", cwd=tmp_path, timeout=SAFETY_S)
    assert again.returncode == 0 and b"already cancelled" in again.stdout


async def test_sigint_stops_gracefully_with_exit_130(tmp_path: Path) -> None:
    async def interrupt(engine: Engine) -> None:
        engine.signal(signal.SIGINT)

    async with open_fake_openai(answer=answer) as server:
        (tmp_path / "exp.toml").write_text(experiment(server.base_url))
        code, report, err = await stopped_run(server, tmp_path, "sig", 3, interrupt)
    assert code == 130, err
    assert report["status"] == "cancelled" and report["is_partial"]
    assert 2 <= report["trials_done"] <= 3 and "Traceback" not in err


async def test_schedule_process_starts_and_stops_on_sigint(tmp_path: Path) -> None:
    (tmp_path / "exp.toml").write_text(experiment("http://127.0.0.1:1/v1"))
    proc = await trio.lowlevel.open_process(
        engine_cmd("run", "exp.toml", "--schedule", "0 3 * * *", "--store", "st"),
        cwd=tmp_path, env=engine_env(), stderr=subprocess.PIPE,
    )  # fmt: skip
    assert proc.stderr is not None
    first = b""
    with trio.fail_after(SAFETY_S):
        while b"\n" not in first:  # the first line says it is up (its signal handlers are installed)
            first += await proc.stderr.receive_some(4096)
    assert b"on schedule '0 3 * * *'" in first
    proc.send_signal(signal.SIGINT)
    rest = b""
    with trio.fail_after(SAFETY_S):
        async for chunk in proc.stderr:
            rest += chunk
        code = await proc.wait()
    assert code == 130 and b"Traceback" not in first + rest


def test_bad_cron_exits_2(tmp_path: Path) -> None:
    (tmp_path / "exp.toml").write_text(experiment("http://127.0.0.1:1/v1") + '[schedule]\ncron = "nightly"\n')
    result = run_engine("run", "exp.toml", "--store", "st", cwd=tmp_path, timeout=SAFETY_S)
    assert result.returncode == 2 and b"cron" in result.stderr and b"Traceback" not in result.stderr


async def test_cancel_of_a_killed_run_ends_it_and_a_resume_still_finishes_it(tmp_path: Path) -> None:
    async with open_fake_openai(answer=answer) as server:
        (tmp_path / "exp.toml").write_text(experiment(server.base_url))
        await kill_after(server, tmp_path, "dead", 3)
        assert statuses(tmp_path)["dead"] == "interrupted"
        # no process is left to read a request: the cancel itself ends the run, partial results kept
        cancelled = run_engine("cancel", "dead", "--store", "st", cwd=tmp_path, timeout=SAFETY_S)
        assert cancelled.returncode == 0 and b"no live process: cancelled" in cancelled.stdout
        assert statuses(tmp_path)["dead"] == "cancelled"
        report = json.loads(run_engine("report", "dead", "--json", "--store", "st", cwd=tmp_path).stdout)
        assert report["status"] == "cancelled" and report["is_partial"] and report["trials_done"] >= 2
        again = run_engine("cancel", "dead", "--store", "st", cwd=tmp_path, timeout=SAFETY_S)
        assert b"already cancelled" in again.stdout
        server.gate.open()
        resume = Engine(tmp_path, "resume-dead")
        await resume.start("run", "--resume", "dead", "--json", "--store", "st")
        code, out, err = await resume.finish()
    assert code == 0, err
    assert json.loads(out)["trials_done"] == TOTAL
    assert max(completions_per_trial(tmp_path / "st", "dead").values()) == 1
