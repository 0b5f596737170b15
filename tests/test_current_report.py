"""The stored report is served only while it is current: an event the report reads after it (a
resumed run's trials, a cancel, a regrade started) makes `report --json` build it again."""

from __future__ import annotations

import json
import time
from pathlib import Path

from engine.actors.targets.target_protocol import TargetRequest
from engine.api import open_engine, spec_from_dict
from engine.events import kinds as k
from engine.events.codec import encode
from engine.store.contract import EventStore
from engine.views.current_report import current_report, current_report_json
from engine.views.queries import replay_json, stored_report
from tests.shims import latest_report_hash


def agent(request: TargetRequest) -> str:
    return request.case.id.upper() if request.flags.get("shout") else request.case.id


SPEC = {
    "name": "current",
    "target": {"kind": "python", "callable": "agent"},
    "variants": [{"name": "quiet"}, {"name": "loud", "flags": {"shout": True}}],
    "cases": [{"id": f"c{i}", "prompt": "p", "expected": f"C{i}"} for i in range(6)],
    "graders": [{"kind": "exact"}],
    "repeat": {"count": 2},
}


def append(log: EventStore, *events: k.Event) -> None:
    log.append([(e.run_id, k.TAG_BY_TYPE[type(e)], encode(e)) for e in events])


async def test_a_finished_run_serves_its_stored_report(tmp_path: Path) -> None:
    async with open_engine(tmp_path, callables={"agent": agent}) as eng:
        report = await eng.run(spec_from_dict(SPEC), run_id="done")
        stored = stored_report(eng.log, "done")
        assert latest_report_hash(eng.log, "done") is not None
        assert current_report(eng.log, "done") == stored == replay_json(eng.log, "done")
        assert json.loads(current_report_json(eng.log, "done"))["winner"] == report.winner


async def test_events_after_the_report_make_it_stale(tmp_path: Path) -> None:
    async with open_engine(tmp_path, callables={"agent": agent}) as eng:
        await eng.run(spec_from_dict(SPEC), run_id="later")
        stored = stored_report(eng.log, "later")
        # the run is resumed after its report: its state moves on, the stored report is stale
        append(eng.log, k.RunStarted(run_id="later", ts=time.time(), experiment="current", trials_total=24,
                                     resumed=True))  # fmt: skip
        assert latest_report_hash(eng.log, "later") is None
        append(eng.log, k.RunCancelled(run_id="later", ts=time.time(), reason="test"))
        now = current_report(eng.log, "later")
        assert now != stored
        assert json.loads(now)["status"] == "cancelled"
        assert now == replay_json(eng.log, "later")  # the same bytes a full replay builds


async def test_labels_and_marks_keep_it_current(tmp_path: Path) -> None:
    """Events outside the report's fold (a mark) change nothing: the stored bytes are still served."""
    async with open_engine(tmp_path, callables={"agent": agent}) as eng:
        await eng.run(spec_from_dict(SPEC), run_id="marked")
        append(eng.log, k.RunMarked(run_id="marked", ts=time.time(), mark="green"))
        assert latest_report_hash(eng.log, "marked") is not None
        assert current_report(eng.log, "marked") == stored_report(eng.log, "marked")


async def test_an_earlier_round_keeps_its_report_while_a_regrade_runs(tmp_path: Path) -> None:
    async with open_engine(tmp_path, callables={"agent": agent}) as eng:
        await eng.run(spec_from_dict(SPEC), run_id="rounds")
        round0 = stored_report(eng.log, "rounds", 0)
        append(eng.log, k.RegradeStarted(run_id="rounds", ts=time.time(), grading=1))
        assert current_report(eng.log, "rounds", 0) == round0  # round 0 is over: its report stands
        live = json.loads(current_report(eng.log, "rounds"))  # the latest round: built, not round 0's
        assert live["grading"] == 1
