"""Everyone's screen, in real headless Chromium: no page scrolls sideways at 390 px and chart text stays
readable there; dark mode from prefers-color-scheme on every page; the keys (`/` search, j/k next and
previous case, Enter opens, Esc closes); the matrix view downloaded as CSV and JSON with its filters.

Waits are on selectors only (the view's CSP forbids eval: never wait_for_function)."""

from __future__ import annotations

import csv
import io
from urllib.parse import parse_qsl, urlsplit

import httpx
import pytest

from tests.browser import BrowserThread, screenshot
from tests.conftest import SAFETY_S
from tests.serve_helpers import make_store, serving


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory):
    with serving(make_store(tmp_path_factory.mktemp("screen"))) as url:
        yield url


def every_page(base_url: str) -> list[str]:
    experiment = httpx.get(f"{base_url}/api/runs", timeout=SAFETY_S).json()[0]["experiment"]
    return ["/", "/runs/r1", "/runs/r1/matrix", "/runs/r1/matrix?show=failing", "/runs/r1/trial?case=c000",
            "/runs/r1/trial?case=c000&variant=baseline", "/runs/r1/tuning", "/compare",
            "/compare?base=r1&cand=r2", f"/history/{experiment}", "/runs/nope", "/history/nope"]  # fmt: skip


def test_no_page_scrolls_sideways_at_390_px_and_charts_stay_readable(
    browser: BrowserThread, base_url: str
) -> None:
    paths = every_page(base_url)

    def measure(page):  # noqa: ANN001, ANN202
        page.set_viewport_size({"width": 390, "height": 844})
        try:
            widths, text = {}, {}
            for path in paths:
                page.goto(base_url + path)
                page.wait_for_selector("main h1")
                widths[path] = page.evaluate("document.documentElement.scrollWidth")
                heights = page.evaluate(
                    "[...document.querySelectorAll('svg text')].map(t => t.getBoundingClientRect().height)"
                )
                text[path] = min([h for h in heights if h > 0], default=None)
            screenshot(page, "history-phone")
            return widths, text
        finally:
            page.set_viewport_size({"width": 1280, "height": 900})

    widths, text = browser.call(measure)
    assert widths == dict.fromkeys(paths, 390)
    charted = {p: h for p, h in text.items() if h is not None}
    assert "/runs/r1" in charted and any(p.startswith("/history/") for p in charted)  # charts were measured
    assert all(h >= 9 for h in charted.values()), charted  # not 4 px: about 10 px text on a phone


def test_dark_mode_follows_the_system_on_every_page(browser: BrowserThread, base_url: str) -> None:
    paths = every_page(base_url)

    def colours(page):  # noqa: ANN001, ANN202
        found = {}
        for scheme in ("light", "dark"):
            page.emulate_media(color_scheme=scheme)
            for path in paths:
                page.goto(base_url + path)
                page.wait_for_selector("main h1")
                found[scheme, path] = page.evaluate("getComputedStyle(document.body).backgroundColor")
        page.emulate_media(color_scheme="light")
        return found

    found = browser.call(colours)
    assert {found["light", p] for p in paths} == {"rgb(255, 255, 255)"}
    assert {found["dark", p] for p in paths} == {"rgb(13, 17, 23)"}


def test_keys_search_move_between_cases_open_and_close(browser: BrowserThread, base_url: str) -> None:
    def keys(page):  # noqa: ANN001, ANN202
        page.goto(f"{base_url}/runs/r1/matrix")
        page.wait_for_selector("body[data-keys='1']")
        order = [r.get_attribute("data-case") for r in page.locator("table.matrix tbody tr").all()]
        seen = []
        for key in ("j", "j", "j", "k"):
            page.keyboard.press(key)
            seen.append(page.locator("tr.kbd-focus").get_attribute("data-case"))
        page.locator("tr.kbd-focus details.prompt summary").click()
        page.wait_for_selector("tr.kbd-focus details.prompt[open]")
        page.keyboard.press("Escape")
        page.wait_for_selector("body:not([data-focus-case])")
        closed = page.locator("details[open]").count()
        page.keyboard.press("/")
        focused = page.evaluate("document.activeElement.name")
        page.keyboard.type("zz")
        page.keyboard.press("Escape")  # leaves the box: the next j moves again
        page.keyboard.press("j")
        page.keyboard.press("Enter")
        page.wait_for_url("**/trial?case=*")
        page.wait_for_selector("main h1")
        return order, seen, closed, focused, page.url

    order, seen, closed, focused, url = browser.call(keys)
    assert seen == [order[0], order[1], order[2], order[1]]
    assert closed == 0 and focused == "q"
    assert url.endswith(f"/runs/r1/trial?case={order[0]}")


def test_the_filtered_view_downloads_as_csv_and_json(browser: BrowserThread, base_url: str) -> None:
    view = "show=failing&sort=-latency"

    def links(page):  # noqa: ANN001, ANN202
        page.goto(f"{base_url}/runs/r1/matrix?{view}&per_page=2")
        page.wait_for_selector("a[data-export='csv']")
        shown = page.locator('[data-field="total"]').inner_text()
        with page.expect_download() as done:
            page.click("a[data-export='csv']")
        hrefs = [page.get_attribute(f"a[data-export='{kind}']", "href") for kind in ("csv", "json")]
        return *hrefs, int(shown), done.value.suggested_filename

    csv_href, json_href, total, filename = browser.call(links)
    kept = dict(parse_qsl(urlsplit(csv_href).query))
    assert kept["show"] == "failing" and kept["sort"] == "-latency" and "page" not in kept
    assert filename == "r1-matrix.csv"
    got = httpx.get(base_url + csv_href, timeout=SAFETY_S)
    assert got.headers["content-disposition"] == 'attachment; filename="r1-matrix.csv"'
    rows = list(csv.DictReader(io.StringIO(got.text)))
    data = httpx.get(base_url + json_href, timeout=SAFETY_S).json()
    page = httpx.get(f"{base_url}/api/runs/r1/matrix?{view}&limit=500", timeout=SAFETY_S).json()
    expected = [(r["case"], v, r["cells"][v]["verdict"]) for r in page["rows"] for v in page["variants"]
                if v in r["cells"]]  # fmt: skip
    assert total == page["total"] > 2  # every kept row, not the 2 of the page shown
    assert [(r["case"], r["variant"], r["verdict"]) for r in rows] == expected
    assert [(c["case"], c["variant"], c["verdict"]) for c in data["cells"]] == expected
    trials = httpx.get(f"{base_url}/api/runs/r1/trials", params={"limit": 500}, timeout=SAFETY_S).json()[
        "trials"
    ]
    first = {(t["case"], t["variant"]): t["output"] for t in trials if t["repeat"] == 1}
    assert all(r["output"] == first[r["case"], r["variant"]] for r in rows)
    assert all(c["output"] == first[c["case"], c["variant"]] for c in data["cells"])
