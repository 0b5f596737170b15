"""The self-contained HTML file (`engine report RUN --html FILE`) opened from file:// in headless
Chromium with the network cut: the outputs in the matrix, a search that finds words from an output, a
filter, a drill-down to a cell's trials with the graders' reasons and the diff against the baseline,
keys, no sideways scroll at 390 px, and dark mode. Waits are on selectors only."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.browser import BrowserThread, screenshot
from tests.conftest import SAFETY_S, run_engine
from tests.serve_helpers import make_store, serving


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    store = make_store(tmp_path_factory.mktemp("file"))
    wrote = run_engine("report", "r1", "--store", "st", "--html", "r1.html", cwd=store.parent)
    assert wrote.returncode == 0, wrote.stderr.decode()
    with serving(store) as url:
        trials = httpx.get(f"{url}/api/runs/r1/trials", params={"limit": 500}, timeout=SAFETY_S).json()[
            "trials"
        ]
    return store.parent / "r1.html", trials


def offline(page) -> list[str]:  # noqa: ANN001
    """Every request the page makes beyond its own file is refused and recorded."""
    asked: list[str] = []

    def refuse(route) -> None:  # noqa: ANN001
        asked.append(route.request.url)
        route.abort()

    page.route("http*://**", refuse)
    return asked


def test_the_file_shows_outputs_and_opens_a_trial_with_reasons_and_a_diff(
    browser: BrowserThread, made: tuple[Path, list[dict]]
) -> None:
    file, trials = made
    text = file.read_text()
    assert "<script src" not in text and "<link" not in text and "http://" not in text.split("<script>")[-1]
    first = {(t["variant"], t["case"]): t for t in trials if t["repeat"] == 1}
    differing = next(
        c for (v, c), t in first.items() if v == "cold" and t["output"] != first["baseline", c]["output"]
    )

    def read(page):  # noqa: ANN001, ANN202
        asked = offline(page)
        try:
            page.goto(file.as_uri())
            page.wait_for_selector("body[data-ready='1']")
            cell = page.locator(f'tr[data-case="{differing}"] td[data-variant="cold"]').inner_text()
            page.click(f'tr[data-case="{differing}"] td[data-variant="cold"] .cell')
            page.wait_for_selector("#drill:not([hidden]) .trial")
            screenshot(page, "report-file-drill")
            drill = page.locator("#drill").inner_text()
            diff = (page.locator("#drill pre.diff del").count(), page.locator("#drill pre.diff ins").count())
            page.keyboard.press("Escape")
            page.wait_for_selector("#drill[hidden]", state="attached")
            return cell, drill, diff, asked
        finally:
            page.unroute("http*://**")

    cell, drill, (dels, inss), asked = browser.call(read)
    trial = first["cold", differing]
    assert trial["output"] in cell  # the output itself in the matrix
    assert trial["prompt"] in drill and trial["output"] in drill
    reasons = [g["reason"] for t in trials if (t["variant"], t["case"]) == ("cold", differing)
               for g in t["grades"] if g["reason"]]  # fmt: skip
    assert all(reason in drill for reason in reasons)
    assert "Diff against the baseline" in drill and dels + inss > 0
    assert asked == []  # nothing asked of the network


def test_the_files_search_filters_and_keys(browser: BrowserThread, made: tuple[Path, list[dict]]) -> None:
    file, trials = made
    expected = sorted({t["case"] for t in trials if "not sure" in (t["output"] or "")})
    assert expected

    order = sorted({t["case"] for t in trials})

    def use(page):  # noqa: ANN001, ANN202
        asked = offline(page)
        try:
            page.goto(file.as_uri())
            page.wait_for_selector("body[data-ready='1']")
            page.keyboard.press("/")
            page.keyboard.type("not sure")
            page.wait_for_selector(f"#file-count:text-is('{len(expected)}')")
            found = [
                r.get_attribute("data-case")
                for r in page.locator("table.matrix tbody tr:not([hidden])").all()
            ]
            page.keyboard.press("Escape")
            page.fill("#file-q", "")
            page.select_option("#file-show", "errors")
            page.wait_for_selector("#file-count:text-is('0')")
            page.select_option("#file-show", "all")
            page.wait_for_selector(f"#file-count:text-is('{len(order)}')")
            page.keyboard.press("Escape")  # leaves the select: the keys move through cases again
            page.keyboard.press("j")
            page.keyboard.press("j")
            focused = page.locator("tr.kbd-focus").get_attribute("data-case")
            page.keyboard.press("Enter")
            page.wait_for_selector("#drill:not([hidden])")
            opened = page.locator("#drill").get_attribute("data-case")
            page.keyboard.press("Escape")
            page.set_viewport_size({"width": 390, "height": 844})
            page.wait_for_selector("#drill[hidden]", state="attached")
            width = page.evaluate("document.documentElement.scrollWidth")
            page.emulate_media(color_scheme="dark")
            dark = page.evaluate("getComputedStyle(document.body).backgroundColor")
            return found, focused, opened, width, dark, asked
        finally:
            page.emulate_media(color_scheme="light")
            page.set_viewport_size({"width": 1280, "height": 900})
            page.unroute("http*://**")

    found, focused, opened, width, dark, asked = browser.call(use)
    assert sorted(found) == expected
    assert focused == opened == order[1]
    assert width == 390 and asked == []
    assert dark == "rgb(13, 17, 23)"  # the system's dark mode, as the served pages
