"""engine in hosts that are not Trio programs: asyncio applications and plain scripts.

- `open_engine_asyncio(store)`: inside a running asyncio loop (FastAPI, LangChain, Jupyter), the
  engine runs as a Trio guest of that loop (`trio.lowlevel.start_guest_run`): same thread, no second
  event loop to manage. It yields an `AsyncioEngine` whose `start()` returns a handle with the same
  API as the Trio one: `events()`, `result()`, `cancel()`, here as asyncio awaitables.
- `run_experiment(spec_or_path)`: blocking, for scripts and notebooks cells that want a report.

Crossing between the loops: asyncio -> Trio through the Trio token (`run_sync_soon` is safe from
anywhere); Trio -> asyncio through `loop.call_soon_threadsafe`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import trio

from engine.api import Engine, RunHandle, load_experiment, open_engine
from engine.events import kinds as k
from engine.events.report import RunReport
from engine.events.spec import ExperimentSpec

_END = object()  # the end of a handle's event stream


def _spec(spec_or_path: ExperimentSpec | str | Path) -> ExperimentSpec:
    return spec_or_path if isinstance(spec_or_path, ExperimentSpec) else load_experiment(spec_or_path)


def run_experiment(
    spec_or_path: ExperimentSpec | str | Path,
    *,
    store: str | Path = ".engine",
    callables: Mapping[str, Callable[..., Any]] | None = None,
    run_id: str | None = None,
) -> RunReport:
    """Run one experiment to its report, blocking (a script, a notebook cell without `await`)."""
    spec = _spec(spec_or_path)

    async def main() -> RunReport:
        async with open_engine(store, callables=callables) as eng:
            return await eng.run(spec, run_id=run_id)

    return trio.run(main)


class AsyncioRunHandle:
    """A run started from asyncio: the Trio RunHandle's API, awaited on the asyncio side."""

    def __init__(self, loop: asyncio.AbstractEventLoop, token: trio.lowlevel.TrioToken, run_id: str) -> None:
        self.run_id = run_id
        self._loop, self._token = loop, token
        self._result: asyncio.Future[RunReport] = loop.create_future()
        self._events: asyncio.Queue[Any] = asyncio.Queue()
        self._trio: RunHandle | None = None

    async def result(self) -> RunReport:
        return await self._result

    async def events(self) -> AsyncIterator[k.Event]:
        """Every event of the run as it becomes durable (start(..., events=True))."""
        while (event := await self._events.get()) is not _END:
            yield event

    def cancel(self, reason: str = "cancelled by caller") -> None:
        self._token.run_sync_soon(lambda: self._trio.cancel(reason) if self._trio else None)

    # --- called in Trio, delivered to asyncio ---
    def _settle(self, report: RunReport | None, error: BaseException | None) -> None:
        def deliver() -> None:
            if not self._result.done():
                self._result.set_exception(error) if error else self._result.set_result(report)  # type: ignore[arg-type]

        self._loop.call_soon_threadsafe(deliver)

    def _emit(self, event: object) -> None:
        self._loop.call_soon_threadsafe(self._events.put_nowait, event)


class AsyncioEngine:
    """An Engine living as a Trio guest in the running asyncio loop."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, token: trio.lowlevel.TrioToken, engine: Engine
    ) -> None:
        self._loop, self._token, self.engine = loop, token, engine

    def start(
        self, spec: ExperimentSpec, *, run_id: str | None = None, events: bool = False
    ) -> AsyncioRunHandle:
        from engine.api import new_run_id

        handle = AsyncioRunHandle(self._loop, self._token, run_id or new_run_id())
        self._token.run_sync_soon(self._start_in_trio, spec, handle, events)
        return handle

    async def run(self, spec: ExperimentSpec, *, run_id: str | None = None) -> RunReport:
        return await self.start(spec, run_id=run_id).result()

    def _start_in_trio(self, spec: ExperimentSpec, handle: AsyncioRunHandle, events: bool) -> None:
        handle._trio = trio_handle = self.engine.start(spec, run_id=handle.run_id, events=events)

        async def forward() -> None:
            if events:
                async for event in trio_handle.events():
                    handle._emit(event)
            handle._emit(_END)
            try:
                handle._settle(await trio_handle.result(), None)
            except Exception as exc:  # the caller sees it from result()
                handle._settle(None, exc)

        self.engine._nursery.start_soon(forward)


@asynccontextmanager
async def open_engine_asyncio(
    store: str | Path = ".engine", *, callables: Mapping[str, Callable[..., Any]] | None = None
) -> AsyncIterator[AsyncioEngine]:
    """The engine inside the running asyncio loop, for as long as the block lasts."""
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[AsyncioEngine] = loop.create_future()
    finished: asyncio.Future[None] = loop.create_future()
    stop: list[trio.Event] = []

    async def trio_main() -> None:
        async with open_engine(store, callables=callables) as eng:
            stop.append(trio.Event())
            token = trio.lowlevel.current_trio_token()
            loop.call_soon_threadsafe(ready.set_result, AsyncioEngine(loop, token, eng))
            await stop[0].wait()

    def done(outcome: Any) -> None:
        def settle() -> None:
            error = getattr(outcome, "error", None)
            if not ready.done():
                ready.set_exception(error or RuntimeError("the engine stopped before it started"))
            finished.set_exception(error) if error else finished.set_result(None)

        loop.call_soon_threadsafe(settle)

    trio.lowlevel.start_guest_run(
        trio_main, run_sync_soon_threadsafe=loop.call_soon_threadsafe, done_callback=done,
        host_uses_signal_set_wakeup_fd=True,
    )  # fmt: skip
    guest = await ready
    try:
        yield guest
    finally:
        guest._token.run_sync_soon(stop[0].set)
        await finished
