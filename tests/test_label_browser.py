"""Labelling with the keyboard in real headless Chromium: three trials labelled, the figure changes.

Skipped, with the reason, where Chromium or Playwright is missing. Nothing waits on the clock: the
browser waits for page conditions (a hang guard bounds them).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.browser import BrowserThread, require_browser, screenshot
from tests.conftest import run_engine
from tests.label_runs import judged_run
from tests.serve_helpers import serving

# a selector, not a script: the view's Content-Security-Policy refuses the eval that
# wait_for_function needs
READY = "body[data-label-ready='1']"
TOKEN = "label-token-0123456789"
AGREEMENT = "li[data-judge=judge] [data-field=label-agreement]"


@pytest.fixture
def browser():
    require_browser()
    thread = BrowserThread()
    yield thread
    thread.close()


async def test_three_trials_labelled_with_the_keyboard_change_the_agreement(
    tmp_path: Path, browser: BrowserThread
) -> None:
    await judged_run(tmp_path / "st")
    with serving(tmp_path / "st", "--token", TOKEN) as url:

        def label_three(page):  # noqa: ANN001, ANN202
            page.goto(f"{url}/runs/lab/labels?token={TOKEN}")  # the link sets the token's cookie
            before = page.locator(AGREEMENT).inner_text()
            page.click("#label-start")
            for key in ("p", "f", "p"):  # c0 pass (agrees), c1 fail (the judge passed it), c2 pass
                page.wait_for_selector(READY, state="attached")
                here = page.url
                page.keyboard.press(key)
                page.wait_for_url(lambda now, here=here: now != here)
            page.wait_for_selector(READY, state="attached")
            screenshot(page, "labelled")
            here = page.url
            page.keyboard.press("n")  # the next unlabelled, without labelling this one
            page.wait_for_url(lambda now, here=here: now != here and "/trial?" in now)
            page.goto(f"{url}/runs/lab/labels")
            count = page.locator("[data-field=label-count]").inner_text()
            return before, page.locator(AGREEMENT).inner_text(), count

        before, after, count = await browser.acall(label_three)
    assert (before, after, count) == ("-", "0.667", "3")
    report = json.loads(run_engine("report", "lab", "--json", "--store", "st", cwd=tmp_path).stdout)
    (judge,) = report["label_agreement"]["judges"]
    assert [(d["case"], d["label"]) for d in judge["disagreements"]] == [("c1", "fail")]
    assert (judge["tp"], judge["fp"], judge["fn"], judge["tn"]) == (2, 1, 0, 0)
