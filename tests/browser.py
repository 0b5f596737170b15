"""Headless Chromium (Debian's, through Playwright's executable_path) for the web view's tests.

Playwright's sync API belongs to the thread that started it, and a Trio test must not block its
loop (the fake model server runs there): so one thread owns the browser and runs what a test sends
it, and the test awaits the answer in a worker thread.
"""

from __future__ import annotations

import queue
import shutil
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# this machine's network is closed: without these, Chromium keeps dialing out and failing
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip
ARTIFACTS = Path(__file__).parent / "artifacts"


def require_browser() -> None:
    """Skip (with the reason) where Chromium or Playwright is missing; .ci/run installs both."""
    if CHROMIUM is None:
        pytest.skip("no chromium on this machine (apt-get install chromium; .ci/run does)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.skip("playwright is not installed (pip install -e '.[dev]')")


class BrowserThread:
    """A page in headless Chromium, driven from one thread: call(fn) runs fn(page) there."""

    def __init__(self) -> None:
        self._work: queue.Queue[tuple[Callable[[Any], Any], Future[Any]] | None] = queue.Queue()
        self._ready: Future[None] = Future()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        self._ready.result()

    def _run(self) -> None:
        from playwright.sync_api import sync_playwright

        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                page.set_default_timeout(300_000)  # a hang guard only: waits are on page conditions
                self._ready.set_result(None)
                while (item := self._work.get()) is not None:
                    fn, done = item
                    try:
                        done.set_result(fn(page))
                    except BaseException as exc:  # noqa: BLE001 - handed to the waiting test
                        done.set_exception(exc)
                browser.close()
        except BaseException as exc:  # noqa: BLE001
            if not self._ready.done():
                self._ready.set_exception(exc)

    def call(self, fn: Callable[[Any], Any]) -> Any:
        done: Future[Any] = Future()
        self._work.put((fn, done))
        return done.result()

    async def acall(self, fn: Callable[[Any], Any]) -> Any:
        import trio

        return await trio.to_thread.run_sync(self.call, fn)

    def close(self) -> None:
        self._work.put(None)
        self._thread.join()


def screenshot(page: Any, name: str) -> Path:
    """A full-page screenshot kept as a test artefact (tests/artifacts/, not committed)."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")
    return path
