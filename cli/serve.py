"""`engine serve`: the web view of a store (or of one bundle file)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from engine.cli.options import StoreOpt, store_path


def serve(
    store: StoreOpt = None,
    host: Annotated[
        str, typer.Option("--host", help="Address to bind (beyond localhost: needs a token).")
    ] = "127.0.0.1",
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, help="Port (0: any free port; the URL is printed).")
    ] = 8765,
    open_browser: Annotated[bool, typer.Option("--open", help="Open the runs page in a browser.")] = False,
    token: Annotated[
        str | None,
        typer.Option(
            "--token", help="Require this token (?token=T or Authorization: Bearer T); `ps` shows it."
        ),
    ] = None,
    token_file: Annotated[
        Path | None,
        typer.Option(
            "--token-file", help="Read the token from this file's first line (or set ENGINE_SERVE_TOKEN)."
        ),
    ] = None,
    allow_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-host",
            help="Also answer requests whose Host header names HOST (repeatable; loopback names always; "
            "'*': any). Needed with --host 0.0.0.0.",
        ),
    ] = None,
    bundle: Annotated[
        str | None, typer.Option("--bundle", help="Serve the run in this .bundle file (no store needed).")
    ] = None,
) -> None:
    """A live web view of runs, trials and comparisons; runs may go on beside it. Read-only, but with
    a token people may label trials' outputs (the labels are events in the store)."""
    from engine.web.server import check_bind, resolve_token, run_server

    secret = resolve_token(token, token_file)
    check_bind(host, secret, allow_host)
    if bundle is not None:
        from engine.views.bundle_sources import open_bundle_store

        source = open_bundle_store(bundle)[0]
        run_server(
            source, host, port, secret, open_browser, allow_host, label=f"bundle {bundle}", labels=False
        )
        return
    path = store_path(store)
    run_server(path, host, port, secret, open_browser, allow_host)
