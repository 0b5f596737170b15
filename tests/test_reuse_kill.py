"""kill -9 of a real `engine run --reuse` process, then resume: no reuse lost or doubled, no reused
trial sent, and the report of an uninterrupted run. Progress is read from the fake server's gate
and the requests that arrive (tests/test_cli_lifecycle.py's harness), never from the clock."""

from __future__ import annotations

import json
import signal
from collections import Counter
from pathlib import Path

from engine.events import kinds as k
from tests.fakes.openai_server import open_fake_openai
from tests.test_cli_lifecycle import CASES, REPEATS, Engine, answer, events_of, experiment, strip_volatile

SENT = CASES * REPEATS  # the cold variant's trials: the warm one's are reused from "source"


def only_warm(text: str) -> str:
    return text.replace('[[variants]]\nname = "cold"\nparams = { temperature = 0.1 }\n', "")


def timeless(report: object) -> object:
    stripped = strip_volatile(report)
    assert isinstance(stripped, dict)
    for variant in stripped["variants"]:
        for age in ("oldest_age_s", "newest_age_s"):
            variant.get("reuse", {}).pop(age, None)
    return stripped


def per_trial(store: Path, run_id: str, kind: type) -> Counter[tuple[str, str, int]]:
    return Counter((e.variant, e.case, e.repeat) for e in events_of(store, run_id, kind) if type(e) is kind)


async def run_to_end(cwd: Path, name: str, *args: str) -> object:
    code, out, err = await (await Engine(cwd, name).start(*args)).finish()
    assert code == 0, err
    return json.loads(out)


async def test_kill_9_of_a_reusing_run_then_resume(tmp_path: Path) -> None:
    store = tmp_path / "st"
    async with open_fake_openai(answer=answer) as server:
        (tmp_path / "warm.toml").write_text(only_warm(experiment(server.base_url)))
        (tmp_path / "exp.toml").write_text(experiment(server.base_url))
        await run_to_end(
            tmp_path, "source", "run", "warm.toml", "--run-id", "source", "--json", "--store", "st"
        )
        reuse = ("--reuse=source", "--json", "--store", "st")
        before = server.received
        expected = timeless(await run_to_end(tmp_path, "ref", "run", "exp.toml", "--run-id", "ref", *reuse))
        assert server.received - before == SENT
        for point, released in enumerate((0, SENT // 2, SENT - 1)):
            run_id = f"killed-{point}"
            server.gate.hold()
            before = server.received
            engine = await Engine(tmp_path, run_id).start("run", "exp.toml", "--run-id", run_id, *reuse)
            server.gate.release(released)
            await server.wait_received(before + released + 1)
            engine.signal(signal.SIGKILL)
            await engine.finish()
            sent_before_kill = per_trial(store, run_id, k.TrialCompleted)
            server.gate.open()
            before = server.received
            report = await run_to_end(
                tmp_path, f"resume-{point}", "run", "--resume", run_id, "--json", "--store", "st"
            )
            assert server.received - before == SENT - len(sent_before_kill), point
            reused, sent = per_trial(store, run_id, k.TrialReused), per_trial(store, run_id, k.TrialCompleted)
            assert len(reused) == SENT and max(reused.values()) == 1, (point, "a reuse lost or doubled")
            assert len(sent) == SENT and max(sent.values()) == 1, point
            assert {variant for variant, _, _ in reused} == {"warm"}
            assert timeless(report) == expected, point
