"""Screenshots of `engine serve` and of the shared HTML file for docs/web-view.md and the README
(needs Debian's chromium and playwright, as the browser tests do).

    .venv/bin/python docs/web-view/screenshots.py STORE  # every page: a store holding quickstart-1/2, tune-1
    .venv/bin/python docs/web-view/screenshots.py        # the matrix, a trial and a diff (phone and dark
                                                         # too, and the HTML file's drill-down) on a small
                                                         # store it makes itself (no model needed)
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.browser import BrowserThread  # noqa: E402

OUT = Path(__file__).parent
PAGES = {
    "runs": "/",
    "run": "/runs/quickstart-1",
    "matrix": "/runs/quickstart-1/matrix",
    "trial": "/runs/quickstart-1/trial?case=capital-fr",
    "compare": "/compare?base=quickstart-1&cand=quickstart-2",
    "tuning": "/runs/tune-1/tuning",
    "history": "/history/quickstart-concise-vs-verbose",
}
Shot = Callable[[Any, str], None]


def page_shot(path: str, out: Path, width: int = 1280, dark: bool = False, selector: str = "main h1") -> Shot:
    def shoot(page: Any, url: str) -> None:
        page.set_viewport_size({"width": width, "height": 844 if width < 600 else 800})
        page.emulate_media(color_scheme="dark" if dark else "light")
        page.goto(url + path)
        page.wait_for_selector(selector)
        page.locator(selector).first.scroll_into_view_if_needed()
        page.screenshot(path=str(out), full_page=False)

    return shoot


def file_shot(file: Path, out: Path) -> Shot:
    """The shared HTML file from file://, a cell's drill-down open (its diff against the baseline)."""

    def shoot(page: Any, url: str) -> None:
        page.set_viewport_size({"width": 1280, "height": 800})
        page.emulate_media(color_scheme="light")
        page.goto(file.as_uri())
        page.wait_for_selector("body[data-ready='1']")
        page.click("table.matrix tbody tr td[data-variant='cold'] .cell")
        page.wait_for_selector("#drill:not([hidden]) pre.diff")
        page.screenshot(path=str(out), full_page=False)

    return shoot


def fixture_shots(work: Path) -> tuple[Path, dict[str, Shot]]:
    """A small store from the tests' fixtures (runs r1 and r2, three variants) and its pictures."""
    from tests.conftest import run_engine
    from tests.serve_helpers import make_store

    store = make_store(work)
    run_engine("report", "r1", "--store", "st", "--html", "r1.html", cwd=work)
    shots = {
        "matrix-outputs": page_shot("/runs/r1/matrix", OUT / "matrix-outputs.png"),
        "trial-whole": page_shot("/runs/r1/trial?case=c001", OUT / "trial-whole.png"),
        "diff": page_shot("/compare?base=r1&cand=r2", OUT / "diff.png", selector="#diffs"),
        "matrix-phone-dark": page_shot("/runs/r1/matrix", OUT / "matrix-phone-dark.png", 390, dark=True),
        "report-file": file_shot(work / "r1.html", OUT / "report-file.png"),
    }
    return store, shots


def main(store: str | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        if store is None:
            made, shots = fixture_shots(Path(tmp))
            store = str(made)
        else:
            shots = {name: page_shot(path, OUT / f"{name}.png") for name, path in PAGES.items()}
        cmd = [sys.executable, "-m", "engine.cli.main", "serve", "--store", store, "--port", "0"]
        server = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        browser = BrowserThread()
        try:
            url = server.stdout.readline().split()[2].rstrip("/")  # type: ignore[union-attr]
            for name, shoot in shots.items():
                browser.call(lambda page, shoot=shoot: shoot(page, url))
                print(OUT / f"{name}.png")
        finally:
            browser.close()
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
