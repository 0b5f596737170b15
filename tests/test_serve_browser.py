"""The web view in real headless Chromium: live progress, a trial's output, the failing filter.

Skipped, with the reason, where Chromium or Playwright is missing. Screenshots go to
tests/artifacts/. Nothing waits on the clock: the live run's answers leave the fake model server only
when the test releases them, and the browser waits for page conditions (a hang guard bounds them).
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
import trio

from tests.browser import BrowserThread, screenshot
from tests.conftest import SAFETY_S, run_engine
from tests.fixtures.agent import SCRIPT_OUTPUT
from tests.serve_helpers import gated_live_run, make_store, serving

DONE = "Number(document.querySelector('[data-field=done]').textContent)"
TOTAL = "Number(document.querySelector('[data-field=total]').textContent)"
STATUS = "document.querySelector('[data-field=status]').textContent"
READY = "document.readyState === 'complete'"


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory):
    store = make_store(tmp_path_factory.mktemp("browser"))
    cold = run_engine("run", "exp.toml", "--run-id", "r3", "--variant", "cold", "--store", "st", "-q",
                      cwd=store.parent)  # fmt: skip
    assert cold.returncode == 0, cold.stderr.decode()
    with serving(store) as url:
        yield url


def test_a_trial_opened_from_the_matrix_shows_its_output_as_text(
    browser: BrowserThread, base_url: str
) -> None:
    def open_trial(page):  # noqa: ANN001, ANN202
        page.goto(f"{base_url}/runs/r1/matrix")
        page.click('a.cell[href="/runs/r1/trial?case=c000&variant=xss"]')
        page.wait_for_url("**/runs/r1/trial?case=c000&variant=xss")
        screenshot(page, "trial")
        return page.locator("pre.output").all_inner_texts(), page.evaluate("window.__pwned === undefined")

    outputs, not_run = browser.call(open_trial)
    assert outputs == [SCRIPT_OUTPUT] * 3  # three repeats side by side, shown as the text it is
    assert not_run  # neither the <script> nor the onerror handler ran


def test_the_matrix_filters_to_failing_cases(browser: BrowserThread, base_url: str) -> None:
    trials = httpx.get(f"{base_url}/api/runs/r3/trials", params={"limit": 500}, timeout=SAFETY_S).json()
    failing = {t["case"] for t in trials["trials"] if t["status"] != "pass"}
    assert 0 < len(failing) < 6

    def filter_failing(page):  # noqa: ANN001, ANN202
        page.goto(f"{base_url}/runs/r3/matrix")
        page.select_option("select[name=show]", "failing")
        page.click("form.filters button")
        page.wait_for_url("**show=failing**")
        screenshot(page, "matrix-failing")
        return [row.split()[0] for row in page.locator("table.matrix tbody tr").all_inner_texts()]

    assert set(browser.call(filter_failing)) == failing


async def test_the_run_page_follows_a_live_run(browser: BrowserThread, tmp_path: Path) -> None:
    async with gated_live_run(tmp_path) as (server, engine, url):

        def open_page(page):  # noqa: ANN001, ANN202
            page.goto(f"{url}/runs/live")
            page.evaluate("window.__sameDocument = true")
            return page.evaluate(DONE)

        before = await browser.acall(open_page)
        assert before >= 1
        server.gate.release(2)
        await server.wait_received(5)  # two more trials are in the log

        def sees_progress(page):  # noqa: ANN001, ANN202
            # selectors, not wait_for_function: the view's CSP forbids the eval that needs
            page.wait_for_selector(f'body[data-progress-done]:not([data-progress-done="{before}"])')
            assert page.evaluate("window.__sameDocument === true")
            screenshot(page, "run-live")
            return page.evaluate(DONE)

        assert await browser.acall(sees_progress) > before  # moved without a reload
        server.gate.open()
        code, _, err = await engine.finish()
        assert code == 0, err

        def sees_the_end(page):  # noqa: ANN001, ANN202
            # the page reloads itself once the run ends (the final report); waits survive navigation
            # the server renders data-status (the script never changes it): the reloaded page
            page.wait_for_selector('#progress[data-status="completed"]')
            page.wait_for_selector("svg.chart")  # the final report's forest plot
            page.wait_for_load_state()
            assert page.evaluate(f"window.__sameDocument === undefined && {READY}")
            assert page.evaluate(f"{STATUS} === 'completed' && {DONE} === {TOTAL}")
            screenshot(page, "run-completed")
            return page.locator("svg.chart").count()

        with trio.fail_after(SAFETY_S):
            assert await browser.acall(sees_the_end) == 1  # the final report: its forest plot
