"""The embedding API inside a Trio program, with Python callable targets and a real store."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
import trio

from engine.actors.targets.target_protocol import TargetRequest
from engine.api import open_engine, spec_from_dict
from engine.errors import RunBusyError
from engine.events import kinds as k
from engine.events.spec import grader_spec
from engine.presentation.markdown import report_markdown
from engine.store.memory import MemoryStore
from engine.views.queries import replay_json, stored_report


def flag_agent(request: TargetRequest) -> str:
    return request.case.id.upper() if request.flags.get("shout") else request.case.id


def spec(repeats: int = 2, strategy: str = "mean", **extra: object) -> object:
    return spec_from_dict(
        {
            "name": "embedded",
            "target": {"kind": "python", "callable": "agent"},
            "variants": [{"name": "quiet"}, {"name": "loud", "flags": {"shout": True}}],
            "cases": [{"id": f"c{i}", "prompt": "p", "expected": f"C{i}"} for i in range(10)],
            "graders": [{"kind": "exact"}],
            "repeat": {"count": repeats, "strategy": strategy},
            **extra,
        }
    )


async def test_start_iterate_events_and_result(tmp_path: Path) -> None:
    async with open_engine(tmp_path, callables={"agent": flag_agent}) as eng:
        handle = eng.start(spec(), events=True)
        seen = [event async for event in handle.events()]
        report = await handle.result()
    types = {type(e) for e in seen}
    assert {k.ExperimentDefined, k.RunStarted, k.TrialCompleted, k.TrialGraded, k.RunCompleted} <= types
    assert sum(isinstance(e, k.TrialGraded) for e in seen) == 2 * 10 * 2
    scores = {v.name: v.mean_score for v in report.variants}
    assert scores == {"quiet": 0.0, "loud": 1.0}
    assert report.winner == "loud" and report.winner_significant


async def test_report_replays_byte_identical(tmp_path: Path) -> None:
    async with open_engine(tmp_path, callables={"agent": flag_agent}) as eng:
        report = await eng.run(spec())
        assert replay_json(eng.log, report.run_id) == stored_report(eng.log, report.run_id)
        assert eng.replay(report.run_id) == report


async def test_errors_are_recorded_not_fatal(tmp_path: Path) -> None:
    def broken(request: TargetRequest) -> str:
        if request.case.id == "c3":
            raise RuntimeError("subject crashed")
        return request.case.id.upper()

    async with open_engine(tmp_path, callables={"agent": broken}) as eng:
        report = await eng.run(spec(repeats=1))
    for variant in report.variants:
        assert variant.errors == 1 and variant.trials == 10 and variant.scored == 9


async def test_pass_at_k_exits_early_and_skips_the_rest(tmp_path: Path) -> None:
    async with open_engine(tmp_path, callables={"agent": flag_agent}) as eng:
        report = await eng.run(spec(repeats=4, strategy="pass_at_k"))
    loud = next(v for v in report.variants if v.name == "loud")
    quiet = next(v for v in report.variants if v.name == "quiet")
    assert loud.trials == 10 and loud.skipped == 30 and loud.pass_at_k == 1.0
    assert quiet.trials == 40 and quiet.skipped == 0 and quiet.pass_at_k == 0.0
    assert not report.is_partial and report.trials_done == report.trials_total == 80


async def test_cancel_through_the_handle_keeps_partial_results(tmp_path: Path) -> None:
    """Three trials answer; every later one waits on a gate the test never opens: the cancel, not
    the clock, decides where the run stops."""
    answered, gate = 0, trio.Event()

    async def gated(request: TargetRequest) -> str:
        nonlocal answered
        if answered == 3:
            await gate.wait()
        answered += 1
        return request.case.id

    async with open_engine(tmp_path, callables={"agent": gated}) as eng:
        handle = eng.start(spec(repeats=5, execution={"concurrency": 2}), events=True)
        graded = 0
        async for event in handle.events():
            graded += isinstance(event, k.TrialGraded)
            if graded == 3:
                handle.cancel("enough")
        report = await handle.result()
    assert report.status == "cancelled" and report.is_partial
    assert report.trials_done == 3 < report.trials_total


async def test_wall_time_budget_with_virtual_clock(autojump_clock: trio.abc.Clock) -> None:
    async def slow(request: TargetRequest) -> str:
        await trio.sleep(10)
        return request.case.id

    # the in-memory store is called inline: no thread wait lets the virtual clock jump early
    async with open_engine(MemoryStore(), callables={"agent": slow}) as eng:
        report = await eng.run(spec(repeats=5, budget={"max_wall_time_s": 35}, execution={"concurrency": 1}))
    assert report.status == "partial" and report.budget_exhausted == ["max_wall_time_s"]
    assert report.trials_done == 3  # three ten-second trials fit in 35 s, one after the other


async def test_regrade_uses_stored_outputs_without_calling_the_subject(tmp_path: Path) -> None:
    from engine.runtime.regrade import regrade_run

    calls = 0

    def counting(request: TargetRequest) -> str:
        nonlocal calls
        calls += 1
        return flag_agent(request)

    async with open_engine(tmp_path, callables={"agent": counting}) as eng:
        first = await eng.run(spec(repeats=1))
        assert calls == 20 and {v.name: v.mean_score for v in first.variants} == {"quiet": 0.0, "loud": 1.0}
        lenient = [grader_spec(kind="exact", case_sensitive=False)]
        second = await regrade_run(eng.log, first.run_id, lenient)
        assert calls == 20
        assert {v.name: v.mean_score for v in second.variants} == {"quiet": 1.0, "loud": 1.0}
        assert stored_report(eng.log, first.run_id) == replay_json(eng.log, first.run_id)


async def test_cost_budget_holds_across_concurrent_workers(autojump_clock: trio.abc.Clock) -> None:
    from engine.actors.targets.target_protocol import TargetResponse

    async def priced(request: TargetRequest) -> TargetResponse:
        await trio.sleep(1)  # virtual: every admitted trial is in flight at once
        return TargetResponse(text=request.case.id.upper(), tokens_in=100, tokens_out=1000)

    costly = spec(
        repeats=5,
        target={"kind": "python", "callable": "agent", "model": "m"},
        pricing={"m": {"input_per_mtok": 0.0, "output_per_mtok": 10.0}},
        budget={"max_cost_usd": 0.055},
        execution={"concurrency": 8},
    )
    async with open_engine(MemoryStore(), callables={"agent": priced}) as eng:
        report = await eng.run(costly)
    spent = sum(v.cost_usd for v in report.variants)
    assert report.budget_exhausted == ["max_cost_usd"] and report.is_partial
    assert spent <= 0.055 and report.trials_done == 5 and abs(spent - 0.05) < 1e-9


async def test_experiment_setup_runs_first_and_a_failure_is_an_input_error(tmp_path: Path) -> None:
    import pytest

    from engine.errors import InputError

    marker = tmp_path / "ready"
    async with open_engine(tmp_path / "st", callables={"agent": flag_agent}) as eng:
        ok = spec(repeats=1, setup=[f"touch {marker}"])
        await eng.run(ok)
        assert marker.exists()
        with pytest.raises(InputError, match="setup"):
            await eng.run(spec(repeats=1, setup=["echo broken >&2; exit 3"]))
        runs = eng.runs()
    assert [r.status for r in runs][-1] == "failed"


async def test_resume_writes_skips_a_crash_left_out(tmp_path: Path) -> None:
    from engine.events.codec import encode
    from engine.events.spec import VariantSpec
    from engine.store.blobs import pack_blob

    exp = spec(repeats=3, strategy="pass_at_k")
    key, blob = pack_blob(b"C0")
    ident = {"run_id": "crashed", "variant": "loud", "case": "c0", "repeat": 0}
    before_crash = [
        k.ExperimentDefined(run_id="crashed", spec=exp, spec_hash="h"),  # type: ignore[arg-type]
        k.VariantProposed(run_id="crashed", variant=VariantSpec(name="quiet"), index=0),
        k.VariantProposed(run_id="crashed", variant=VariantSpec(name="loud", flags={"shout": True}), index=1),
        k.RunStarted(run_id="crashed", experiment="embedded", trials_total=60),
        k.TrialCompleted(**ident, output_hash=key, latency_ms=1.0),
        k.TrialGraded(**ident, score=1.0, passed=True),
    ]
    async with open_engine(tmp_path, callables={"agent": flag_agent}) as eng:
        eng.log.append(
            [(e.run_id, k.TAG_BY_TYPE[type(e)], encode(e)) for e in before_crash], blobs=[(key, blob)]
        )
        report = await eng.run(None, run_id="crashed", resume=True)
    loud = next(v for v in report.variants if v.name == "loud")
    assert not report.is_partial and report.trials_done == 60
    assert loud.trials == 10 and loud.skipped == 20


async def test_a_run_in_progress_cannot_be_resumed_alongside(tmp_path: Path) -> None:
    started, go_on = trio.Event(), trio.Event()

    async def held_agent(request: TargetRequest) -> str:
        started.set()
        await go_on.wait()  # the run stays busy until the refused resume has been tried
        return request.case.id

    async with open_engine(tmp_path, callables={"agent": held_agent}) as eng:
        handle = eng.start(spec(), run_id="busy")
        await started.wait()
        with pytest.raises(RunBusyError, match="already running"):
            await eng.run(None, run_id="busy", resume=True)
        go_on.set()
        report = await handle.result()
        completions = [e for _, e in eng.log.read_run("busy", tags={"trial.completed"})]
    # the refused resume started nothing: the run finished alone, each trial once
    assert report.status == "completed" and report.trials_done == len(completions) == 2 * 10 * 2


async def test_report_summarises_each_case_tag(tmp_path: Path) -> None:
    def tags(i: int) -> list[str]:
        return ["geo" if i < 5 else "math"] + (["smoke"] if i == 0 else [])

    def half_loud(request: TargetRequest) -> str:  # right on the geo cases only, unless loud
        i = int(request.case.id[1:])
        return request.case.id.upper() if request.flags.get("shout") or i < 5 else "?"

    tagged = spec_from_dict(
        {
            "name": "tagged",
            "target": {"kind": "python", "callable": "agent"},
            "variants": [{"name": "quiet"}, {"name": "loud", "flags": {"shout": True}}],
            "cases": [
                {"id": f"c{i}", "prompt": "p", "expected": f"C{i}", "tags": tags(i)} for i in range(10)
            ],
            "graders": [{"kind": "exact"}],
        }
    )
    async with open_engine(tmp_path, callables={"agent": half_loud}) as eng:
        report = await eng.run(tagged)
    quiet, loud = report.variants
    assert list(quiet.by_tag) == ["geo", "math", "smoke"]
    assert (quiet.by_tag["geo"].cases, quiet.by_tag["geo"].pass_rate, quiet.by_tag["math"].pass_rate) == (
        5,
        1.0,
        0.0,
    )
    assert quiet.by_tag["smoke"].cases == 1 and loud.by_tag["math"].mean_score == 1.0
    markdown = report_markdown(msgspec.to_builtins(report))
    assert (
        "### By tag (score / pass rate)" in markdown
        and "| math | 0.000 / 0.000 | 1.000 / 1.000 |" in markdown
    )
