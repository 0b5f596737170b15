"""`engine.serve_app(store)` mounted in a host application (in process, through httpx's ASGI transport)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import msgspec
from starlette.applications import Starlette
from starlette.routing import Mount

from engine import serve_app
from engine.events import kinds as k
from engine.events.codec import decode, encode
from engine.events.kinds import TAG_BY_TYPE
from engine.store.open import open_event_log
from engine.views.queries import replay_json
from tests.serve_helpers import make_store


async def test_the_view_mounts_under_a_host_apps_prefix(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    with open_event_log(store) as log:  # the host's own store object: one LMDB handle per process
        host = Starlette(routes=[Mount("/engine", app=serve_app(log))])
        transport = httpx.ASGITransport(app=host)
        async with httpx.AsyncClient(transport=transport, base_url="http://host") as client:
            runs = (await client.get("/engine/api/runs")).json()
            assert [r["run_id"] for r in runs] == ["r1", "r2"]
            page = (await client.get("/engine/runs/r1/matrix")).text
            # links and assets stay under the mount point
            assert 'href="/engine/runs/r1/trial?case=c000&amp;variant=cold"' in page
            assert 'href="/engine/static/style.css"' in page
            assert (await client.get("/engine/static/app.js")).status_code == 200
            missing = await client.get("/engine/api/runs/nope")
            assert missing.status_code == 404 and missing.json() == {"error": "no run 'nope' in this store"}


async def test_a_live_runs_report_is_the_replay_of_its_log_as_it_grows(tmp_path: Path) -> None:
    """A run with no stored report is built from the view's kept, incrementally folded state: after
    every append it must equal `engine replay`'s fold from scratch."""
    store = make_store(tmp_path)
    with open_event_log(store) as log:
        events = [decode(data) for _, data in log.read_run("r1")]
        copied = [msgspec.structs.replace(e, run_id="live") for e in events]
        copied = [e for e in copied if not isinstance(e, k.ReportWritten)]
        half = len(copied) // 2
        transport = httpx.ASGITransport(app=serve_app(log))
        async with httpx.AsyncClient(transport=transport, base_url="http://host") as client:
            for part in (copied[:half], copied[half:]):
                log.append([("live", TAG_BY_TYPE[type(e)], encode(e)) for e in part])
                served = await client.get("/api/runs/live")
                assert served.content == replay_json(log, "live")
            assert json.loads(served.content)["status"] == "completed"
