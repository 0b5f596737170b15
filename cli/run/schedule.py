"""`engine run --schedule` (or an enabled [schedule] table): a process that stays alive and runs a
session at every cron fire, never two at once, until a signal stops it."""

from __future__ import annotations

import sys
from pathlib import Path

import trio

from engine.cli.run.stopping import NOTE_SCHEDULE, signal_exit_code, stop_on_signals
from engine.errors import InputError
from engine.events.spec import ExperimentSpec
from engine.input.experiment_plan import ExperimentPlan
from engine.input.narrow import Narrowing, narrow


def schedule_command(
    file: Path | None,
    store: Path,
    cron: str | None,
    narrowing: Narrowing | None = None,
    loaded: ExperimentPlan | None = None,
) -> int:
    from engine.input.loader import load_plan
    from engine.input.validate import check_cron

    if file is None:
        raise InputError("engine run", "FILE", "expected an experiment file to run on a schedule")
    plan = loaded or load_plan(file)  # the file's own cron is checked as it loads
    if narrowing is not None:  # --case/--variant/--seed hold for every session
        plan = narrow(plan, narrowing)
    spec = plan.spec
    if cron is not None:
        check_cron(cron, "engine run", "--schedule")
    cron = cron or (spec.schedule.cron if spec.schedule else None)
    if cron is None:
        raise InputError(str(file), "schedule.cron", "expected a cron expression")
    from engine.runtime.allocator import tune_allocator

    tune_allocator()  # a scheduler runs for months: its memory stays level run after run
    return trio.run(_scheduled, spec, store, cron, str(file))


async def _scheduled(spec: ExperimentSpec, store: Path, cron: str, source: str) -> int:
    from engine.api import open_engine
    from engine.runtime.schedule import ScheduleControl, run_on_schedule

    control = ScheduleControl()

    def log(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    async with open_engine(store) as eng, trio.open_nursery() as nursery:
        await nursery.start(stop_on_signals, control, nursery.cancel_scope, NOTE_SCHEDULE)
        log(f"engine: running {spec.name!r} on schedule {cron!r} (Ctrl-C to stop)")
        await run_on_schedule(eng, spec, cron, control, log=log, source=source)
        nursery.cancel_scope.cancel()
    # the process only ends on a signal: say which, as shells expect (130 for SIGINT)
    return signal_exit_code(control.stop_reason) if control.stop_reason else 0
