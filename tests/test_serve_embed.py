"""`engine.serve_app(store)` mounted in a host application (in process, through httpx's ASGI transport)."""

from __future__ import annotations

from pathlib import Path

import httpx
from starlette.applications import Starlette
from starlette.routing import Mount

from engine import serve_app
from engine.store.log import EventLog
from tests.serve_helpers import make_store


async def test_the_view_mounts_under_a_host_apps_prefix(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    with EventLog(store) as log:  # the host's own store object: one LMDB handle per process
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
