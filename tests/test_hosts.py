"""engine outside a Trio program: a blocking call for scripts, and a Trio guest inside asyncio hosts
(a plain running loop, as in a notebook, and a Starlette app served by uvicorn)."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

import httpx
import trio
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from engine.actors.targets.target_protocol import TargetRequest
from engine.api import spec_from_dict
from engine.events import kinds as k
from engine.hosts import open_engine_asyncio, run_experiment


def answer(request: TargetRequest) -> str:
    return "Paris" if request.seed % 4 else "Lyon"


async def first_only(request: TargetRequest) -> str:
    """Answers case c0; every other call waits until the run is cancelled (no clock involved)."""
    if request.case.id != "c0":
        await trio.sleep_forever()
    return "Paris"


CALLABLES = {"answer": answer, "first_only": first_only}


def spec(cases: int = 6, callable_name: str = "answer") -> Any:
    return spec_from_dict({
        "name": "hosted", "seed": 1, "target": {"kind": "python", "callable": callable_name},
        "cases": [{"id": f"c{i}", "prompt": "Capital of France?", "expected": "Paris"} for i in range(cases)],
    })  # fmt: skip


def test_run_experiment_blocks_and_returns_the_report(tmp_path: Path) -> None:
    report = run_experiment(spec(), store=tmp_path / "st", callables=CALLABLES, run_id="sync")
    assert report.run_id == "sync" and report.status == "completed" and report.trials_done == 6


def test_inside_a_running_asyncio_loop_with_events_and_cancel(tmp_path: Path) -> None:
    async def main() -> tuple[Any, list[Any], Any]:
        async with open_engine_asyncio(tmp_path / "st", callables=CALLABLES) as eng:
            handle = eng.start(spec(), run_id="guest", events=True)
            seen = [event async for event in handle.events()]
            report = await handle.result()
            stopped = eng.start(spec(cases=5, callable_name="first_only"), run_id="stopped", events=True)
            async for event in stopped.events():
                if isinstance(event, k.TrialGraded):
                    stopped.cancel("enough")
            return report, seen, await stopped.result()

    report, seen, stopped = asyncio.run(main())
    assert report.status == "completed" and report.trials_done == 6
    assert sum(isinstance(e, k.TrialGraded) for e in seen) == 6 and any(
        isinstance(e, k.RunCompleted) for e in seen
    )
    assert stopped.status == "cancelled" and stopped.trials_done == 1


def test_a_starlette_app_under_uvicorn_runs_experiments(tmp_path: Path) -> None:
    async def experiment(request: Request) -> JSONResponse:
        cases = int((await request.json())["cases"])
        report = await request.app.state.engine.run(spec(cases))
        return JSONResponse({"status": report.status, "trials": report.trials_done})

    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        async with open_engine_asyncio(tmp_path / "st", callables=CALLABLES) as eng:
            app = Starlette(routes=[Route("/experiments", experiment, methods=["POST"])])
            app.state.engine = eng
            # the listening socket exists before the server starts: the client's connect cannot race it
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            sock.listen()
            server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
            serving = asyncio.create_task(server.serve(sockets=[sock]))
            url = f"http://127.0.0.1:{sock.getsockname()[1]}/experiments"
            async with httpx.AsyncClient(timeout=300) as client:
                first, second = await asyncio.gather(
                    client.post(url, json={"cases": 5}), client.post(url, json={"cases": 7})
                )
            server.should_exit = True
            await serving
            return first.json(), second.json()

    first, second = asyncio.run(main())
    assert first == {"status": "completed", "trials": 5} and second == {"status": "completed", "trials": 7}
