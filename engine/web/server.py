"""`engine serve`: the web view on Hypercorn's Trio worker (the engine's own runtime)."""

from __future__ import annotations

import sys
import webbrowser
from pathlib import Path

import trio
from hypercorn.config import Config
from hypercorn.trio import serve

from engine.errors import InputError
from engine.store.contract import EventStore
from engine.web.app import serve_app

LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}


def check_bind(host: str, token: str | None) -> None:
    if host not in LOCAL_HOSTS and not token:
        raise InputError("engine serve", "--token", f"expected a token to bind beyond localhost ({host})")


def bind_address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def run_server(
    store: Path | EventStore,
    host: str,
    port: int,
    token: str | None,
    open_browser: bool,
    label: str = "",
    labels: bool = True,
) -> None:
    """Serve until interrupted; prints the URL (with the actual port when port is 0) first. With a
    token, people may label outputs (`labels`: a bundle's view keeps nothing, so it never labels)."""
    check_bind(host, token)
    app = serve_app(store, token, labels)
    config = Config()
    config.bind = [bind_address(host, port)]
    config.accesslog = None
    config.errorlog = "-"

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            binds = await nursery.start(serve, app, config)
            url = binds[0] + "/" + (f"?token={token}" if token else "")
            print(f"engine serve: {url} ({label or f'store {store}'}; Ctrl-C stops)", flush=True)
            if open_browser:
                webbrowser.open(url)

    try:
        trio.run(main)
    except KeyboardInterrupt:
        sys.exit(130)
