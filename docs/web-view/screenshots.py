"""Screenshots of every page of `engine serve` for docs/web-view.md (needs chromium + playwright).

    .venv/bin/python docs/web-view/screenshots.py STORE   # a store holding quickstart-1/2 and tune-1
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.browser import BrowserThread  # noqa: E402

PAGES = {
    "runs": "/",
    "run": "/runs/quickstart-1",
    "matrix": "/runs/quickstart-1/matrix",
    "trial": "/runs/quickstart-1/trial?case=capital-fr",
    "compare": "/compare?base=quickstart-1&cand=quickstart-2",
    "tuning": "/runs/tune-1/tuning",
    "history": "/history/quickstart-concise-vs-verbose",
}


def main(store: str) -> None:
    cmd = [sys.executable, "-m", "engine.cli.main", "serve", "--store", store, "--port", "0"]
    server = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    browser = BrowserThread()
    try:
        url = server.stdout.readline().split()[2].rstrip("/")  # type: ignore[union-attr]
        for name, path in PAGES.items():
            out = Path(__file__).parent / f"{name}.png"

            def shoot(page, path: str = path, out: Path = out) -> None:  # noqa: ANN001
                page.goto(url + path)
                page.screenshot(path=str(out), full_page=False)

            browser.call(shoot)
            print(out)
    finally:
        browser.close()
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main(sys.argv[1])
