"""The snapshot keeper folds this process's own event objects where that keeps the log's bytes, and
decodes where it would not: an embedder's int where the event says float, and user code that edits
what it was handed, both leave kept snapshots that `engine rebuild` writes again byte for byte."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.events import kinds as k
from engine.events.codec import decode, encode
from engine.events.kinds import TAG_BY_TYPE
from engine.store.contract import EncodedRows
from engine.store.kept.live_events import adoptable
from engine.store.kept.snapshots import ALL
from engine.store.log.event_log import EventLog
from engine.store.open import open_event_log
from tests.test_snapshots import replayed


def encoded_rows(events: list[k.Event]) -> EncodedRows:
    return EncodedRows([(e.run_id, TAG_BY_TYPE[type(e)], encode(e)) for e in events], list(events))


def trials(ts: Any, latency: Any) -> list[k.Event]:
    """A run whose trial events carry `ts` and `latency` as given (an int where a float is declared)."""
    done = dict(run_id="r", ts=ts, variant="v", case="c0", repeat=0)
    return [
        k.RunStarted(run_id="r", ts=1.5, experiment="e", trials_total=3, pid=1),
        k.TrialStarted(**done),
        k.TrialCompleted(**done, output_hash="h", latency_ms=latency),  # kept whole: no grade yet
        k.TrialStarted(**{**done, "case": "c1"}),
        k.TrialFailed(**{**done, "case": "c1"}, error_kind="infra", message="m", latency_ms=latency),
        k.RunCompleted(run_id="r", ts=ts, status="completed"),
    ]


@pytest.mark.parametrize(("ts", "latency"), [(5, 2.0), (5.0, 2), (5.0, 2.0)])
def test_kept_snapshots_of_live_events_are_the_bytes_a_rebuild_writes(
    tmp_path: Path, ts: Any, latency: Any
) -> None:
    with open_event_log(tmp_path / "st") as log:
        log.append(encoded_rows(trials(ts, latency)))
        assert_stored_is_replay(log, "r")


def assert_stored_is_replay(log: EventLog, run_id: str) -> None:
    """The stored bytes themselves (a decode and encode would turn an int back into 5.0), each of the
    run's last event."""
    for snap in ALL:
        stored = log.get_snapshot(snap.key(run_id))
        assert stored == replayed(log, snap, run_id), snap.name


def test_an_int_time_is_decoded_and_a_float_one_taken_as_it_is() -> None:
    for event in trials(5.0, 2.0)[1:-1]:  # the trial events
        assert adoptable(event, encode(event)), event
    for event in trials(5, 2.0)[1:-1]:
        assert not adoptable(event, encode(event)), event


# a target and an evaluator that edit, in place, the case and variant they were handed
def meddling_answer(request: Any) -> str:
    request.case.metadata["seen"] = request.case.metadata.get("seen", 0) + 1
    request.case.tags.append("touched")
    request.variant.params["temperature"] = 9.0
    request.params["extra"] = True
    return "yes"


def meddling_grade(case: Any, output: str, context: Any) -> float:
    case.metadata["graded"] = True
    if context.variant is not None:
        context.variant.flags["graded"] = True
    return 1.0


async def test_user_code_that_edits_its_request_changes_neither_the_report_nor_the_kept_state(
    tmp_path: Path,
) -> None:
    from engine.api import open_engine, spec_from_dict

    spec = spec_from_dict({
        "name": "meddling", "seed": 3,
        "target": {"kind": "python", "callable": "answer"},
        "params": {"temperature": 0.7},
        "variants": [{"name": "base", "params": {"temperature": 0.2}}, {"name": "other"}],
        "cases": [{"id": f"c{i}", "prompt": "p", "expected": "yes", "metadata": {"n": i}} for i in range(3)],
        "graders": [{"kind": "python", "callable": "grade"}],
        "repeat": {"count": 2},
    })  # fmt: skip
    callables = {"answer": meddling_answer, "grade": meddling_grade}
    async with open_engine(tmp_path / "st", callables=callables) as eng:
        live = await eng.run(spec, run_id="m")
        assert live == eng.replay("m")
    assert spec.cases[0].metadata == {"n": 0} and spec.cases[0].tags == []
    assert spec.variants[0].params == {"temperature": 0.2} and spec.variants[1].flags == {}
    with open_event_log(tmp_path / "st") as log:
        assert_stored_is_replay(log, "m")
        logged = [decode(data) for _, data in log.read_run("m")]
    defined = next(e for e in logged if isinstance(e, k.ExperimentDefined))
    assert defined.spec.cases[0].metadata == {"n": 0} and defined.spec.variants[1].flags == {}


@pytest.mark.parametrize("ttft", [120.5, 120])
def test_a_streamed_trials_pace_is_taken_as_it_is_only_in_floats(tmp_path: Path, ttft: Any) -> None:
    done = dict(run_id="r", ts=5.0, variant="v", case="c0", repeat=0)
    pace = k.AgentReport(ttft_ms=ttft, tokens_per_s=None)
    event = k.TrialCompleted(**done, output_hash="h", latency_ms=2.0, agent=pace)
    assert adoptable(event, encode(event)) == isinstance(ttft, float)
    agent_too = k.TrialCompleted(
        **done, output_hash="h", latency_ms=2.0, agent=k.AgentReport(stderr_hash="s")
    )
    assert not adoptable(agent_too, encode(agent_too))
    with open_event_log(tmp_path / "st") as log:
        log.append(encoded_rows([k.RunStarted(run_id="r", ts=1.5, experiment="e", trials_total=1), event]))
        assert_stored_is_replay(log, "r")


def meddling_empties(request: Any) -> str:
    request.case.tags.append("touched")
    request.case.metadata["seen"] = True
    request.case.criteria["added"] = 1
    return "yes"


def meddling_empties_grade(case: Any, output: str, context: Any) -> float:
    case.tags.append("graded")
    case.metadata["graded"] = True
    return 1.0


async def test_a_run_plans_shared_empties_are_out_of_user_codes_reach(
    tmp_path: Path,
) -> None:
    from engine.api import open_engine
    from engine.input.loader import load_plan
    from engine.input.shared_cases import share_empty_collections

    (tmp_path / "cases.jsonl").write_text(
        "".join(f'{{"id": "c{i}", "prompt": "p", "expected": "yes"}}\n' for i in range(3))
        + '{"id": "c3", "prompt": "p", "expected": "yes", "tags": ["t"]}\n'
    )
    (tmp_path / "exp.toml").write_text(
        'name = "shared"\n[target]\nkind = "python"\ncallable = "answer"\n[suite]\npath = "cases.jsonl"\n'
        '[[graders]]\nkind = "python"\ncallable = "grade"\n[repeat]\ncount = 2\n'
    )
    plan = load_plan(tmp_path / "exp.toml")
    cases = plan.spec.cases
    assert cases[0].tags is not cases[1].tags  # a library caller's plan keeps its own: it may edit them
    empty = share_empty_collections(plan.spec)  # as `engine run` does with the plan it owns
    assert all(c.metadata is empty["metadata"] and c.criteria is empty["criteria"] for c in cases)
    assert cases[0].tags is cases[1].tags is empty["tags"] and cases[3].tags == ["t"]
    callables = {"answer": meddling_empties, "grade": meddling_empties_grade}
    async with open_engine(tmp_path / "st", callables=callables) as eng:
        live = await eng.run(plan, run_id="s")
        assert live == eng.replay("s")
    assert empty == {"tags": [], "criteria": {}, "metadata": {}}  # the shared objects untouched
    assert [c.tags for c in cases] == [[], [], [], ["t"]]
    with open_event_log(tmp_path / "st") as log:
        assert_stored_is_replay(log, "s")
