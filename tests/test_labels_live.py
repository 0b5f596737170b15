"""Labels from two processes while a run is live: nothing lost, nothing doubled, the report unchanged.

The run is held by the fake model server's gate (an answer leaves only when the test releases it);
with one executor worker, once request i has arrived trials 0..i-2 are in the log (see
test_cli_lifecycle). The labels are appended while the run waits; then the gate opens.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import trio

from engine.events import kinds as k
from tests.conftest import engine_cmd, engine_env, run_engine
from tests.fakes.openai_server import open_fake_openai
from tests.test_cli_lifecycle import (
    SAFETY_S,
    TOTAL,
    Engine,
    answer,
    events_of,
    experiment,
    reference_report,
    strip_volatile,
)


def write_rows(path: Path, trials: list[tuple[str, str, int]], verdict: str, by: str) -> Path:
    rows = [
        {"variant": v, "case": c, "repeat": r + 1, "verdict": verdict, "by": by, "note": f"{by} saw it"}
        for v, c, r in trials
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


async def test_two_processes_label_a_live_run(tmp_path: Path) -> None:
    async with open_fake_openai(answer=answer) as server:
        (tmp_path / "exp.toml").write_text(experiment(server.base_url))
        expected = await reference_report(server, tmp_path)
        server.gate.hold()
        before = len(server.requests)
        engine = await Engine(tmp_path, "live").start(
            "run", "exp.toml", "--run-id", "live", "--json", "--store", "st"
        )
        server.gate.release(TOTAL // 2)
        await server.wait_received(before + TOTAL // 2 + 1)  # the run waits on its next answer now
        completed = events_of(tmp_path / "st", "live", k.TrialCompleted)
        done = sorted({(e.variant, e.case, e.repeat) for e in completed})
        assert len(done) >= TOTAL // 2 - 1
        files = [
            write_rows(tmp_path / "ana.jsonl", done, "pass", "ana"),
            write_rows(tmp_path / "bo.jsonl", done, "fail", "bo"),
        ]
        results: list[int] = []

        async def label(file: Path) -> None:
            cmd = engine_cmd("label", "live", "--from", str(file), "--store", "st")
            with trio.fail_after(SAFETY_S):
                ran = await trio.run_process(cmd, cwd=tmp_path, env=engine_env(), capture_stdout=True)
            results.append(ran.returncode)

        async with trio.open_nursery() as both:  # the two processes append at the same time
            for file in files:
                both.start_soon(label, file)
        assert results == [0, 0]
        assert run_engine("status", "live", "--store", "st", cwd=tmp_path).returncode == 0
        server.gate.open()
        code, out, err = await engine.finish()
    assert code == 0, err
    assert strip_volatile(json.loads(out)) == expected  # the run's report is what it is without labels
    labels = events_of(tmp_path / "st", "live", k.LabelRecorded)
    per_trial = Counter((e.variant, e.case, e.repeat, e.by) for e in labels)
    assert len(labels) == 2 * len(done) and set(per_trial.values()) == {1}  # none lost, none doubled
    assert {key[:3] for key in per_trial} == set(done)
    section = json.loads(run_engine("report", "live", "--json", "--store", "st", cwd=tmp_path).stdout)
    assert section["label_agreement"]["labels"] == len(done)  # the latest label of each output counts
