"""`engine serve`: the web view on Hypercorn's Trio worker (the engine's own runtime)."""

from __future__ import annotations

import errno
import sys
import webbrowser
from pathlib import Path

import trio
from hypercorn.config import Config
from hypercorn.trio import serve

from engine.errors import InputError, find_error
from engine.web.app import serve_app

LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}


def check_bind(host: str, token: str | None) -> None:
    if host not in LOCAL_HOSTS and not token:
        raise InputError("engine serve", "--token", f"expected a token to bind beyond localhost ({host})")


def bind_address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def run_server(store: Path, host: str, port: int, token: str | None, open_browser: bool) -> None:
    """Serve until interrupted; prints the URL (with the actual port when port is 0) first."""
    check_bind(host, token)
    app = serve_app(store, token)
    config = Config()
    config.bind = [bind_address(host, port)]
    config.accesslog = None
    config.errorlog = "-"

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            binds = await nursery.start(serve, app, config)
            url = binds[0] + "/" + (f"?token={token}" if token else "")
            print(f"engine serve: {url} (store {store}; Ctrl-C stops)", flush=True)
            if open_browser and not webbrowser.open(url):
                print("engine serve: --open found no browser: open the URL above in one", file=sys.stderr)

    try:
        trio.run(main)
    except KeyboardInterrupt:
        sys.exit(130)
    except BaseException as exc:
        refused = bind_refused(exc, host, port)
        if refused is None:
            raise
        raise refused from None


def bind_refused(exc: BaseException, host: str, port: int) -> InputError | None:
    """A port that cannot be bound, told with the port and a way out (not `[Errno 98]` alone)."""
    found = find_error(exc, OSError)
    if not isinstance(found, OSError) or found.errno not in (errno.EADDRINUSE, errno.EACCES):
        return None
    why = "is in use" if found.errno == errno.EADDRINUSE else "needs privileges to bind"
    way_out = "pick another with --port N (0: any free port)"
    return InputError("engine serve", "--port", f"{bind_address(host, port)} {why}: {way_out}")
