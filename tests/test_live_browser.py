"""A live run in real headless Chromium: the run page's figures (the variants table, not only the
progress strip) follow the run without a reload, and the runs list shows a run started after it loaded.

Skipped, with the reason, where Chromium or Playwright is missing. Nothing waits on the clock: the
run's answers leave the fake model server only when the test releases them, and the browser waits
for selectors (the view's CSP forbids eval, so never wait_for_function).
"""

from __future__ import annotations

from pathlib import Path

import trio

from tests.browser import BrowserThread, screenshot
from tests.conftest import SAFETY_S
from tests.fakes.openai_server import open_fake_openai
from tests.serve_helpers import gated_live_run, serving
from tests.test_cli_lifecycle import Engine, answer, experiment

VARIANT_TRIALS = "#section-variants tbody tr td:nth-child(2)"  # the variants table's trials column


def trials_shown(page) -> int:  # noqa: ANN001
    return sum(int(cell.inner_text()) for cell in page.locator(VARIANT_TRIALS).all())


async def test_the_variants_table_follows_a_live_run_without_reload(
    browser: BrowserThread, tmp_path: Path
) -> None:
    async with gated_live_run(tmp_path) as (server, engine, url):

        def open_page(page):  # noqa: ANN001, ANN202
            page.goto(f"{url}/runs/live")
            page.evaluate("window.__sameDocument = true")
            seq = page.locator("#report").get_attribute("data-seq")
            return seq, trials_shown(page)

        seq, before = await browser.acall(open_page)
        server.gate.release(4)
        await server.wait_received(7)  # four more trials are in the log

        def sees_the_table_move(page):  # noqa: ANN001, ANN202
            page.wait_for_selector(f'#report:not([data-seq="{seq}"]) {VARIANT_TRIALS}', state="attached")
            assert page.evaluate("window.__sameDocument === true")  # swapped in, not reloaded
            screenshot(page, "run-live-figures")
            return trials_shown(page)

        with trio.fail_after(SAFETY_S):
            after = await browser.acall(sees_the_table_move)
        assert after > before >= 1
        server.gate.open()
        code, _, err = await engine.finish()
        assert code == 0, err


async def test_the_runs_list_shows_a_run_started_after_it_loaded(
    browser: BrowserThread, tmp_path: Path
) -> None:
    async with open_fake_openai(answer=answer) as server:
        (tmp_path / "exp.toml").write_text(experiment(server.base_url))
        ran = await Engine(tmp_path, "first").start("run", "exp.toml", "--run-id", "first", "--store", "st")
        assert (await ran.finish())[0] == 0
        with serving(tmp_path / "st") as url:

            def open_list(page):  # noqa: ANN001, ANN202
                page.goto(f"{url}/")
                return page.locator("#runs tbody tr").count()

            assert await browser.acall(open_list) == 1
            server.gate.hold()
            late = await Engine(tmp_path, "late").start(
                "run", "exp.toml", "--run-id", "late", "--store", "st"
            )
            await server.wait_received(1)  # the run has started: its first call waits at the gate

            def sees_the_new_run(page):  # noqa: ANN001, ANN202
                page.wait_for_selector('#runs tbody tr a[href$="/runs/late"]')
                return page.locator("#runs tbody tr").count()

            with trio.fail_after(SAFETY_S):
                assert await browser.acall(sees_the_new_run) == 2
            server.gate.open()
            assert (await late.finish())[0] == 0


async def test_the_matrix_of_a_live_run_follows_it_without_reload(
    browser: BrowserThread, tmp_path: Path
) -> None:
    done = "td.cell-box:not(.pending)"  # a finished trial: with repeats=1, each its own cell

    async with gated_live_run(tmp_path) as (server, engine, url):

        def open_matrix(page):  # noqa: ANN001, ANN202
            page.goto(f"{url}/runs/live/matrix?repeats=1")
            page.wait_for_selector('#matrix-live[data-live="1"]')
            page.evaluate("window.__sameDocument = true")
            return page.locator(done).count()

        before = await browser.acall(open_matrix)
        server.gate.release(4)
        await server.wait_received(7)  # four more trials are in the log

        def sees_the_matrix_move(page):  # noqa: ANN001, ANN202
            page.wait_for_selector(f"#matrix-live {done} >> nth={before}", state="attached")  # one more
            assert page.evaluate("window.__sameDocument === true")  # swapped in, not reloaded
            screenshot(page, "matrix-live")
            return page.locator(done).count()

        with trio.fail_after(SAFETY_S):
            after = await browser.acall(sees_the_matrix_move)
        assert after > before >= 1
        server.gate.open()
        code, _, err = await engine.finish()
        assert code == 0, err
