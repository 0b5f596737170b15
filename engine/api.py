"""The embedding API: drive experiments from another Trio program.

async with open_engine("./.engine", callables={"my_agent": agent}) as eng:
    handle = eng.start(spec, events=True)
    async for event in handle.events():
        ...
    report = await handle.result()
"""

from __future__ import annotations

import secrets
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import msgspec
import trio

from engine.errors import InputError, RunBusyError, user_error
from engine.events import kinds as k
from engine.events.report import RunReport
from engine.events.spec import ExperimentSpec
from engine.input.experiment_plan import ExperimentPlan
from engine.input.loader import load_experiment, spec_from_raw
from engine.runtime.cancel import cancel_run
from engine.runtime.run_status import list_runs
from engine.runtime.runner import RunControl, RunRequest, execute_run
from engine.store.contract import EventStore
from engine.store.open import open_event_log
from engine.views.queries import replay_json, resolve_run

__all__ = [
    "InputError",
    "Engine",
    "RunHandle",
    "open_engine",
    "load_experiment",
    "spec_from_dict",
    "new_run_id",
]


SUBSCRIBER_BUFFER = 1 << 16


def new_run_id() -> str:
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"


def spec_from_dict(data: Mapping[str, Any]) -> ExperimentSpec:
    # suite and override paths are relative to the working directory here, to the file's folder in files
    return spec_from_raw(dict(data), "<dict>", Path.cwd())


class RunHandle:
    """A run started in the engine's nursery."""

    def __init__(
        self, run_id: str, control: RunControl, events: trio.MemoryReceiveChannel[k.Event] | None
    ) -> None:
        self.run_id = run_id
        self.control = control
        self._events = events
        self._done = trio.Event()
        self._report: RunReport | None = None
        self._error: BaseException | None = None

    async def events(self) -> AsyncIterator[k.Event]:
        """Every event of the run as it becomes durable (requires start(..., events=True)). The run
        never waits for this iterator: one that falls SUBSCRIBER_BUFFER events behind ends early, and
        the log (engine.store) still has every event."""
        if self._events is None:
            raise RuntimeError("start the run with events=True to iterate its events")
        async with self._events:
            async for event in self._events:
                yield event

    async def result(self) -> RunReport:
        await self._done.wait()
        if self._error is not None:
            raise self._error
        assert self._report is not None
        return self._report

    def cancel(self, reason: str = "cancelled by caller") -> None:
        self.control.stop(reason)


class Engine:
    def __init__(
        self,
        log: EventStore,
        nursery: trio.Nursery,
        callables: Mapping[str, Callable[..., Any]] | None,
        cancel_poll_s: float = 0.25,
    ) -> None:
        self.log = log
        self.cancel_poll_s = cancel_poll_s
        self._nursery = nursery
        self._callables = dict(callables or {})
        self._active: set[str] = set()  # run ids this engine is executing

    async def run(
        self,
        spec: ExperimentSpec | ExperimentPlan | None,
        *,
        run_id: str | None = None,
        resume: bool = False,
        origin: str = "manual",
        source: str = "",
        control: RunControl | None = None,
        subscribers: list[trio.MemorySendChannel[k.Event]] | None = None,
    ) -> RunReport:
        request = RunRequest(
            spec=spec,
            run_id=run_id or new_run_id(),
            callables=self._callables,
            resume=resume,
            origin=origin,
            source=source,
            control=control or RunControl(),
            subscribers=subscribers if subscribers is not None else [],
            cancel_poll_s=self.cancel_poll_s,
        )
        if request.run_id in self._active:
            raise RunBusyError(f"run {request.run_id} is already running in this engine")
        self._active.add(request.run_id)
        try:
            return await execute_run(self.log, request)
        except BaseExceptionGroup as group:
            # a bad setting found mid-run surfaces as itself, not wrapped in nursery groups
            found = user_error(group)
            if found is None:
                raise
            raise found from None
        finally:
            self._active.discard(request.run_id)

    def start(
        self, spec: ExperimentSpec | ExperimentPlan, *, run_id: str | None = None, events: bool = False
    ) -> RunHandle:
        """Start a run in the background; events=True to iterate its events (then do iterate them)."""
        send, receive = trio.open_memory_channel[k.Event](SUBSCRIBER_BUFFER) if events else (None, None)
        handle = RunHandle(run_id or new_run_id(), RunControl(), receive)

        async def drive() -> None:
            try:
                handle._report = await self.run(
                    spec, run_id=handle.run_id, control=handle.control, subscribers=[send] if send else []
                )
            except Exception as exc:  # surfaced through handle.result()
                handle._error = exc
            finally:
                if send is not None:
                    send.close()
                handle._done.set()

        self._nursery.start_soon(drive)
        return handle

    def replay(self, run_id: str | None = None) -> RunReport:
        return msgspec.json.decode(replay_json(self.log, resolve_run(self.log, run_id)), type=RunReport)

    def cancel(self, run_id: str, reason: str = "", by: str = "api") -> None:
        """Stop a run: the live run (in any process) obeys a cancel request; a run no process executes
        any more (killed) is ended as cancelled at once, its partial results kept."""
        cancel_run(self.log, resolve_run(self.log, run_id), reason, by)

    def runs(self) -> list[Any]:
        return list_runs(self.log)


@asynccontextmanager
async def open_engine(
    store: str | Path | EventStore = ".engine",
    *,
    callables: Mapping[str, Callable[..., Any]] | None = None,
    cancel_poll_s: float = 0.25,
) -> AsyncIterator[Engine]:
    """store: a directory for the LMDB log, or any EventStore (e.g. store.memory.MemoryStore; it stays
    open: its owner closes it). cancel_poll_s: how often a live run checks the log for `engine
    cancel` from other processes."""
    owned = isinstance(store, str | Path)
    log: EventStore = open_event_log(Path(store)) if isinstance(store, str | Path) else store
    try:
        async with trio.open_nursery() as nursery:
            yield Engine(log, nursery, callables, cancel_poll_s)
    except BaseExceptionGroup as group:
        # the nursery wraps what the caller's block raised: a lone error (a bad spec's InputError, the
        # caller's own) surfaces as itself, as it would without the engine around it
        lone = _lone(group)
        if lone is None:
            raise
        raise lone from None
    finally:
        if owned:
            log.close()


def _lone(group: BaseExceptionGroup[BaseException]) -> BaseException | None:
    """The one exception inside nested groups, if there is only one."""
    inner = group.exceptions
    if len(inner) != 1:
        return None
    return _lone(inner[0]) if isinstance(inner[0], BaseExceptionGroup) else inner[0]
