"""`engine serve`: the web view on Hypercorn's Trio worker (the engine's own runtime)."""

from __future__ import annotations

import errno
import gc
import os
import signal
import sys
import time
import webbrowser
from pathlib import Path

import trio
from hypercorn.config import Config
from hypercorn.trio import serve

from engine.errors import InputError, find_error
from engine.store.contract import EventStore
from engine.web.app import serve_app
from engine.web.auth import check_token
from engine.web.host_guard import LOOPBACK_NAMES, normal

WILDCARDS = {"0.0.0.0", "::", ""}  # every interface: the names clients use are not known here
TOKEN_VARIABLE = "ENGINE_SERVE_TOKEN"


def resolve_token(flag: str | None, file: Path | None) -> str | None:
    """--token, else --token-file's first line, else $ENGINE_SERVE_TOKEN (a flag shows in `ps`)."""
    if flag is not None and file is not None:
        raise InputError("engine serve", "--token-file", "expected --token or --token-file, not both")
    if flag is not None:
        return check_token(flag)
    if file is not None:
        try:
            lines = file.read_text().splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(str(file), "--token-file", f"expected a readable text file ({exc})") from None
        return check_token(lines[0].strip() if lines else "", "--token-file")
    found = os.environ.get(TOKEN_VARIABLE)
    return None if found is None else check_token(found.strip(), TOKEN_VARIABLE)


def allowed_hosts(host: str, extra: list[str]) -> frozenset[str]:
    """The names the view answers for: loopback names, the address it is bound to, --allow-host."""
    if normal(host) in WILDCARDS and not extra:
        expected = (
            f"expected --allow-host NAME (repeatable) for each name clients use to reach a view bound to "
            f"{host or 'every interface'}; --allow-host '*' answers any (the token is then the only gate)"
        )
        raise InputError("engine serve", "--allow-host", expected)
    # the bound address itself is the printed URL's host (0.0.0.0 included: a browser reaches it)
    return frozenset(LOOPBACK_NAMES | {normal(host)} | {normal(name) for name in extra})


def check_bind(host: str, token: str | None, extra: list[str] | None = None) -> frozenset[str]:
    if normal(host) not in LOOPBACK_NAMES and not token:
        expected = (
            f"expected a token to bind beyond localhost ({host}): --token-file, ${TOKEN_VARIABLE} or --token"
        )
        raise InputError("engine serve", "--token", expected)
    return allowed_hosts(host, extra or [])


def bind_address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def run_server(
    store: Path | EventStore,
    host: str,
    port: int,
    token: str | None,
    open_browser: bool,
    extra_hosts: list[str] | None = None,
    label: str = "",
    labels: bool = True,
) -> None:
    """Serve until interrupted; prints the URL (with the actual port when port is 0) first. With a
    token, people may label outputs (`labels`: a bundle's view keeps nothing, so it never labels)."""
    if isinstance(store, Path):
        wait_for_store(store)
    app = serve_app(store, token, check_bind(host, token, extra_hosts), labels)
    config = Config()
    config.bind = [bind_address(host, port)]
    config.accesslog = None
    config.errorlog = "-"

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(stop_on_sigint)
            binds = await nursery.start(serve, app, config)
            # the URL once the first page need not wait (a request that comes sooner is served meanwhile)
            await warm_up()
            url = binds[0] + "/" + (f"?token={token}" if token else "")
            print(f"engine serve: {url} ({label or f'store {store}'}; Ctrl-C stops)", flush=True)
            if open_browser and not webbrowser.open(url):
                print("engine serve: --open found no browser: open the URL above in one", file=sys.stderr)

    try:
        trio.run(main)
    except BaseException as exc:
        if interrupted(exc):  # Ctrl-C: 130, as shells expect, and nothing printed
            sys.exit(130)
        refused = bind_refused(exc, host, port)
        if refused is None:
            raise
        raise refused from None


async def warm_up() -> None:
    """What every page needs loaded before a person asks for one: the templates compiled, numpy and
    its random module (the matrix, the statistics, the comparisons' bootstraps), the first calls of
    a comparison made (engine.web.warm), in a worker thread once the port is bound, before the URL is
    printed (benchmarks/README.md#in-code-web; a request that comes sooner is served meanwhile; an error here
    is a page's to report)."""

    def load() -> None:
        import numpy.random  # noqa: F401 - numpy imports it lazily, on a comparison's first bootstrap

        from engine.presentation.templates import compile_all
        from engine.web.warm import warm_statistics

        compile_all()
        warm_statistics()
        # what is loaded now lives as long as the server: out of the collector's full passes, which
        # otherwise walk it again on every page that decodes big states (benchmarks/README.md#in-code-web)
        gc.collect()
        gc.freeze()

    try:
        await trio.to_thread.run_sync(load, abandon_on_cancel=True)
    except Exception:  # noqa: BLE001 - the page that needs it raises it again, with its context
        pass


def wait_for_store(store: Path, every_s: float = 0.25) -> None:
    """A store that does not exist yet (a view opened before the first run): say so, then serve it as
    soon as a run creates it. Polling: LMDB has no event to wait on, and a quarter second is unseen."""
    if _ready(store):
        return
    from engine.web.starter import starter_command

    print(
        f"engine serve: no store at {store} yet; waiting for it (a run creates it, for example "
        f"`{starter_command(store)}`; Ctrl-C stops)",
        flush=True,
    )
    try:
        while not _ready(store):
            time.sleep(every_s)
    except KeyboardInterrupt:
        sys.exit(130)


def _ready(store: Path) -> bool:
    data = store / "data.mdb"
    return data.exists() and data.stat().st_size > 0  # LMDB has written its first pages


async def stop_on_sigint() -> None:
    """Ctrl-C (SIGINT) stops the server, as `engine run` stops: taken here, not left to the
    interpreter's default handler, which a shell that starts it in the background (`engine serve &`
    from a script) has set to ignore the signal, so that nothing but a kill would end it."""
    with trio.open_signal_receiver(signal.SIGINT) as signals:
        async for _ in signals:
            raise KeyboardInterrupt


def interrupted(exc: BaseException) -> bool:
    """Whether Ctrl-C ended the server: a KeyboardInterrupt, alone or in the group the server's
    nursery raises it in (with whatever else its tasks raised as they were cancelled)."""
    if isinstance(exc, BaseExceptionGroup):
        return exc.subgroup(KeyboardInterrupt) is not None
    return isinstance(exc, KeyboardInterrupt)


def bind_refused(exc: BaseException, host: str, port: int) -> InputError | None:
    """A port that cannot be bound, told with the port and a way out (not `[Errno 98]` alone)."""
    found = find_error(exc, OSError)
    if not isinstance(found, OSError) or found.errno not in (errno.EADDRINUSE, errno.EACCES):
        return None
    why = "is in use" if found.errno == errno.EADDRINUSE else "needs privileges to bind"
    way_out = "pick another with --port N (0: any free port)"
    return InputError("engine serve", "--port", f"{bind_address(host, port)} {why}: {way_out}")
