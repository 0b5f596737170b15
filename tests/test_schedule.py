"""The long-lived scheduled process, on trio's virtual clock."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
import trio.testing

from engine.actors.targets.target_protocol import TargetRequest
from engine.api import open_engine, spec_from_dict
from engine.errors import InputError
from engine.input.validate import check_cron
from engine.runtime.run_status import list_runs
from engine.runtime.schedule import ScheduleControl, run_on_schedule
from engine.store.memory import MemoryStore

EPOCH = 1_800_000_000.0  # a fixed wall-clock origin for the virtual clock


def spec(session_s: float) -> object:
    return spec_from_dict(
        {
            "name": "nightly",
            "target": {"kind": "python", "callable": "slow", "timeout_s": 600},
            "cases": [{"id": "c0", "prompt": "p", "expected": "ok"}],
            "variants": [{"name": "only", "params": {"session_s": session_s}}],
        }
    )


async def test_sessions_never_overlap_and_late_fires_are_skipped(autojump_clock: trio.abc.Clock) -> None:
    """On the in-memory store nothing waits on a thread, so the virtual clock only jumps when every
    task waits on a timer: minutes pass exactly as the sessions and the cron say, however busy the
    machine is."""
    active, most, lines = 0, 0, []

    async def slow(request: TargetRequest) -> str:
        nonlocal active, most
        active += 1
        most = max(most, active)
        await trio.sleep(float(request.params["session_s"]))
        active -= 1
        return "ok"

    control = ScheduleControl()
    async with open_engine(MemoryStore(), callables={"slow": slow}, cancel_poll_s=30) as eng:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(trio.sleep, 0)

            async def stop_later() -> None:
                await trio.sleep(5 * 60 + 1)
                control.stop("test over")

            nursery.start_soon(stop_later)
            sessions = await run_on_schedule(
                eng, spec(session_s=90), "* * * * *", control, log=lines.append,
                wall=lambda: EPOCH + trio.current_time(),
            )  # fmt: skip
        runs = list_runs(eng.log)
    assert most == 1, lines
    assert sessions >= 2 and any("skipped" in line for line in lines)
    assert any(line.startswith("next session at ") for line in lines)  # the process says when
    assert all(r.origin == "scheduled" for r in runs)


def test_bad_cron_is_an_input_error() -> None:
    with pytest.raises(InputError, match="cron"):
        check_cron("every night", "exp.toml")


async def test_unfinished_sessions_are_resumed_at_start(tmp_path: Path) -> None:
    import time

    from engine.events import kinds as k
    from engine.events.codec import encode
    from engine.store.log.event_log import Append

    calls = 0

    async def slow(request: TargetRequest) -> str:
        nonlocal calls
        calls += 1
        return "ok"

    nightly = spec(session_s=0)
    # a session whose process died before it ran a single trial: a dead pid in the log
    started = [
        k.ExperimentDefined(run_id="dead-run", ts=time.time(), spec=nightly, spec_hash="h"),  # type: ignore[arg-type]
        k.RunStarted(run_id="dead-run", ts=time.time(), experiment="nightly", trials_total=1, pid=2**22 + 7),
    ]
    control = ScheduleControl()
    control.stop("only the resume")
    async with open_engine(tmp_path, callables={"slow": slow}) as eng:
        eng.log.append([Append(e.run_id, k.TAG_BY_TYPE[type(e)], encode(e)) for e in started])
        lines: list[str] = []
        await run_on_schedule(eng, nightly, "0 3 * * *", control, log=lines.append)  # type: ignore[arg-type]
        statuses = {r.run_id: r.status for r in list_runs(eng.log)}
    assert lines[0] == "resuming unfinished session dead-run"
    assert statuses == {"dead-run": "completed"} and calls == 1
