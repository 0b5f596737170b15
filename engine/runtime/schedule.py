"""The long-lived process: run an experiment or tuning session on a cron schedule.

A running guard makes sure sessions never overlap: a fire that comes while the
previous session is still running is skipped with a log line.
Sessions left unfinished by a previous process are resumed first.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import msgspec
import trio
from croniter import croniter

from engine.events.report import RunReport
from engine.events.spec import ExperimentSpec
from engine.input.validate import check_cron
from engine.runtime.run_status import list_runs
from engine.runtime.runner import RunControl
from engine.runtime.tuning.history import last_scheduled_end
from engine.store.contract import EventStore
from engine.store.projections.best import best_variations

Log = Callable[[str], None]


class Sessions(Protocol):
    """What a schedule needs of the engine that runs its sessions (engine.api.Engine is one): the
    runtime sits below the embedding API, so it names the two members it uses instead of the class."""

    log: EventStore

    async def run(
        self,
        spec: ExperimentSpec | None,
        *,
        run_id: str | None = None,
        resume: bool = False,
        origin: str = "manual",
        source: str = "",
        control: RunControl | None = None,
    ) -> RunReport: ...


@dataclass
class ScheduleControl:
    """Stops the loop and the session in progress (SIGINT/SIGTERM in `engine run --schedule`)."""

    stopped: trio.Event = field(default_factory=trio.Event)
    session: RunControl | None = None
    stop_reason: str | None = None

    def stop(self, reason: str = "stopped") -> None:
        self.stop_reason = self.stop_reason or reason
        self.stopped.set()
        if self.session is not None:
            self.session.stop(reason)


def scheduled_spec(spec: ExperimentSpec) -> ExperimentSpec:
    """Apply [schedule]'s per-run caps (they win over the session's own limits)."""
    sched = spec.schedule
    if sched is None:
        return spec
    if sched.max_wall_time_s is not None:
        spec = msgspec.structs.replace(
            spec, budget=msgspec.structs.replace(spec.budget, max_wall_time_s=sched.max_wall_time_s)
        )
    if sched.max_experiments_per_run is not None and spec.tune is not None:
        tune = msgspec.structs.replace(spec.tune, max_experiments=sched.max_experiments_per_run)
        spec = msgspec.structs.replace(spec, tune=tune)
    return spec


def from_current_best(spec: ExperimentSpec, log: EventStore) -> ExperimentSpec:
    """A scheduled tuning session starts where the latest scheduled session of this experiment
    ended (its last accepted configuration), not from the file's [params]: otherwise every night
    would repeat the same search. Before the first scheduled session it starts from the best
    accepted values of earlier (manual) sessions. Each session also gets its own seed (the file's
    plus the sessions before it), so random search samples anew."""
    if spec.tune is None:
        return spec
    mine = [r.run_id for r in list_runs(log) if r.experiment == spec.name]
    tuned = {p.name for p in spec.tune.parameters}
    ended = last_scheduled_end(log, spec.name)
    values = ended if ended is not None else {b.parameter: b.value for b in best_variations(log, mine)}
    start = {name: value for name, value in values.items() if name in tuned}
    seed = (spec.seed + len(mine)) % 2**63
    return msgspec.structs.replace(spec, params={**spec.params, **start}, seed=seed)


async def run_on_schedule(
    engine: Sessions,
    spec: ExperimentSpec,
    cron: str,
    control: ScheduleControl,
    *,
    log: Log = print,
    wall: Callable[[], float] = time.time,
    source: str = "",
) -> int:
    """Run sessions at each cron fire until stopped; returns the number of sessions run."""
    check_cron(cron, "engine run --schedule", "cron")
    spec, sessions, running = scheduled_spec(spec), 0, False

    async def session(run_id: str | None, resume: bool) -> None:
        nonlocal running, sessions
        running, control.session = True, RunControl()
        try:
            start = None if resume else from_current_best(spec, engine.log)
            report = await engine.run(
                start, run_id=run_id, resume=resume, origin="scheduled",
                control=control.session, source=source,
            )  # fmt: skip
            sessions += 1
            log(f"session {report.run_id}: {report.status}")
        finally:
            running, control.session = False, None

    for run_id in _unfinished(engine, spec.name):
        log(f"resuming unfinished session {run_id}")
        await session(run_id, resume=True)
    fires = croniter(cron, datetime.datetime.fromtimestamp(wall()))
    async with trio.open_nursery() as nursery:
        while not control.stopped.is_set():
            next_fire = fires.get_next(float)
            log(f"next session at {_clock(next_fire)}")
            with trio.move_on_after(max(0.0, next_fire - wall())):
                await control.stopped.wait()
            if control.stopped.is_set():
                break
            if running:
                log(f"skipped the {_clock(next_fire)} session: the previous one is still running")
                continue
            nursery.start_soon(session, None, False)
    return sessions


def _unfinished(engine: Sessions, name: str) -> list[str]:
    return [r.run_id for r in list_runs(engine.log) if r.experiment == name and r.status in ("interrupted",)]


def _clock(ts: float) -> str:
    return datetime.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")
