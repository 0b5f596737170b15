"""The output matrix in real headless Chromium: the outputs themselves in the cells, a text search that
finds words from an output, a regex search, a verdict filter, and pages whose links keep the filters;
the compare page's word diffs, and the badge naming the grading round a page shows.

Skipped, with the reason, where Chromium or Playwright is missing. The page sets no script to wait
on: the browser waits for selectors (the view's CSP forbids eval, so never wait_for_function).
"""

from __future__ import annotations

import httpx
import pytest

from tests.browser import BrowserThread, screenshot
from tests.conftest import SAFETY_S, run_engine
from tests.fixtures.agent import SCRIPT_OUTPUT
from tests.serve_helpers import make_store, serving


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory):
    store = make_store(tmp_path_factory.mktemp("matrix"))
    (store.parent / "lenient.toml").write_text('[[graders]]\nkind = "regex"\npattern = "City\\\\d+"\n')
    regraded = run_engine("regrade", "r2", "--graders", "lenient.toml", "--name", "lenient", "--store", "st",
                          cwd=store.parent)  # fmt: skip
    assert regraded.returncode == 0, regraded.stderr.decode()
    with serving(store) as url:
        yield url


def trials(base_url: str) -> list[dict]:
    found = httpx.get(f"{base_url}/api/runs/r1/trials", params={"limit": 500}, timeout=SAFETY_S).json()
    assert found["total"] == 54
    return found["trials"]


def shown_cases(page) -> list[str]:  # noqa: ANN001
    return [row.get_attribute("data-case") for row in page.locator("table.matrix tbody tr").all()]


def test_the_matrix_shows_each_cells_output_and_verdict(browser: BrowserThread, base_url: str) -> None:
    first = {(t["variant"], t["case"]): t["output"] for t in trials(base_url) if t["repeat"] == 1}

    def read(page):  # noqa: ANN001, ANN202
        page.goto(f"{base_url}/runs/r1/matrix")
        page.wait_for_selector("table.matrix td.cell-box pre.out")
        screenshot(page, "matrix-outputs")
        cell = 'tr[data-case="c000"] td.cell-box'
        return (page.locator(cell).all_inner_texts(), page.locator(".matrix-legend").inner_text(),
                page.evaluate("window.__pwned === undefined"))  # fmt: skip

    cells, legend, not_run = browser.call(read)
    assert len(cells) == 3  # baseline, cold, xss
    for text, variant in zip(cells, ("baseline", "cold", "xss"), strict=True):
        assert first[(variant, "c000")] in text  # the output itself, as text
        assert text.split()[0] in ("pass", "fail", "flaky")  # the verdict in a word beside its colour
    assert SCRIPT_OUTPUT in cells[2] and not_run  # model output is shown, never run
    assert all(word in legend for word in ("pass", "fail", "flaky", "error", "grading error"))


def test_search_finds_words_from_an_output(browser: BrowserThread, base_url: str) -> None:
    expected = {t["case"] for t in trials(base_url) if "not sure" in (t["output"] or "")}
    assert expected  # words only outputs hold: in no prompt, case id or expected answer
    assert not any("not sure" in t["prompt"] or "not sure" in t["case"] for t in trials(base_url))

    def search(page):  # noqa: ANN001, ANN202
        page.goto(f"{base_url}/runs/r1/matrix")
        page.fill("input[name=q]", "not sure")
        page.click("form.filters button")
        page.wait_for_url("**q=not+sure**")
        page.wait_for_selector("#matrix-count")
        return shown_cases(page), page.locator('[data-field="total"]').inner_text()

    cases, total = browser.call(search)
    assert set(cases) == expected and total == str(len(expected))


def test_a_regex_search_and_a_filter(browser: BrowserThread, base_url: str) -> None:
    matrix = httpx.get(f"{base_url}/api/runs/r1/matrix", timeout=SAFETY_S).json()
    flaky = {r["case"] for r in matrix["rows"] if any(c["verdict"] == "flaky" for c in r["cells"].values())}

    def run(page):  # noqa: ANN001, ANN202
        page.goto(f"{base_url}/runs/r1/matrix")
        page.fill("input[name=q]", "^City[0-2]$")  # the expected answers of c000, c001 and c002
        page.check("input[name=regex]")
        page.click("form.filters button")
        page.wait_for_url("**regex=1**")
        page.wait_for_selector("#matrix-count")
        by_regex = shown_cases(page)
        page.goto(f"{base_url}/runs/r1/matrix")
        page.select_option("select[name=show]", "flaky")
        page.click("form.filters button")
        page.wait_for_url("**show=flaky**")
        page.wait_for_selector("#matrix-count")
        return by_regex, shown_cases(page)

    by_regex, by_filter = browser.call(run)
    assert by_regex == ["c000", "c001", "c002"]
    assert flaky and set(by_filter) == flaky


def test_pages_count_and_their_links_keep_the_filters(browser: BrowserThread, base_url: str) -> None:
    def walk(page):  # noqa: ANN001, ANN202
        page.goto(f"{base_url}/runs/r1/matrix?per_page=2&sort=-latency&tag=geo")
        page.wait_for_selector("#matrix-count")
        first = (shown_cases(page), page.locator("#matrix-count").inner_text())
        page.goto(f"{base_url}/runs/r1/matrix?per_page=2")
        page.click("a[rel=next]")
        page.wait_for_url("**page=2**")
        page.wait_for_selector("a[rel=prev]")
        second = (shown_cases(page), page.url)
        page.click("a[rel=prev]")
        page.wait_for_selector("a[rel=next]")
        return first, second, shown_cases(page)

    (tagged, count), (second, url), back = browser.call(walk)
    assert sorted(tagged) == ["c000", "c001"] and "2 cases · page 1 of 1" in count  # tag kept, one page
    assert second == ["c002", "c003"] and "per_page=2" in url and "page=2" in url
    assert back == ["c000", "c001"]


def test_the_compare_page_shows_both_outputs_with_a_word_diff(browser: BrowserThread, base_url: str) -> None:
    def first(run: str) -> dict:
        found = httpx.get(f"{base_url}/api/runs/{run}/trials", params={"limit": 500}, timeout=SAFETY_S).json()
        return {(t["variant"], t["case"]): t["output"] for t in found["trials"] if t["repeat"] == 1}

    base, cand = first("r1"), first("r2")
    differ = {key for key in cand if base.get(key) != cand[key]}
    assert differ, "two seeds give some other answers"

    def read(page):  # noqa: ANN001, ANN202
        page.goto(f"{base_url}/compare?base=r1&cand=r2")
        page.wait_for_selector("#diffs section.diff-case")
        screenshot(page, "compare-diff")
        shown = []
        for section in page.locator("#diffs section.diff-case").all():
            sides = section.locator("pre.diff").all_inner_texts()
            marked = section.locator("pre.diff del").count() + section.locator("pre.diff ins").count()
            shown.append((section.get_attribute("data-variant"), section.get_attribute("data-case"), sides,
                          marked))  # fmt: skip
        return shown

    shown = browser.call(read)
    assert {(v, c) for v, c, _, _ in shown if (v, c) in differ}  # the changed outputs are there
    for variant, case, (left, right), marked in shown:
        assert (left, right) == (base[(variant, case)], cand[(variant, case)])  # each output whole
        assert (marked > 0) == (left != right)  # changed words marked, and only those


def test_a_badge_names_the_grading_round_a_page_shows(browser: BrowserThread, base_url: str) -> None:
    def badges(page):  # noqa: ANN001, ANN202
        found = []
        for path in ("/runs/r1", "/runs/r2", "/runs/r2/matrix"):
            page.goto(base_url + path)
            found.append(page.locator('[data-field="grading"]').inner_text())
        return found

    assert browser.call(badges) == ["grading round 0 (original)", "grading round 1 (lenient)",
                                    "grading round 1 (lenient)"]  # fmt: skip


def test_a_round_selector_shows_an_earlier_grading_round(browser: BrowserThread, base_url: str) -> None:
    def pick_round_0(page, path: str, form: str) -> tuple[str, str, str]:  # noqa: ANN001
        page.goto(base_url + path)
        failing_latest = page.locator('[data-field="total"]').inner_text() if "matrix" in path else ""
        page.select_option(f"{form} [data-field=rounds]", "0")
        page.click(f"{form} button")
        page.wait_for_selector('[data-field="grading"]:has-text("grading round 0")')
        chosen = page.locator(f"{form} [data-field=rounds] option:checked").inner_text()
        failing = page.locator('[data-field="total"]').inner_text() if "matrix" in path else ""
        return chosen, failing_latest, failing

    def pick(page):  # noqa: ANN001, ANN202
        run = pick_round_0(page, "/runs/r2", "#rounds")
        assert "grading=0" in page.url
        matrix = pick_round_0(page, "/runs/r2/matrix?show=failing", "form.filters")
        assert "grading=0" in page.url and "show=failing" in page.url  # the round is kept with the filters
        screenshot(page, "matrix-round-0")
        return run, matrix

    run, matrix = browser.call(pick)
    assert run[0] == matrix[0] == "0 (original)"
    # that round 0 and a later round really differ is shown in tests/test_serve_rounds.py, where the
    # regrade changes verdicts; this one's lenient regrade changes none


def test_no_page_scrolls_sideways_on_a_phone(browser: BrowserThread, base_url: str) -> None:
    """390 px wide: wide tables and the matrix scroll inside their own box, never the page; the compare
    page's spec field names are never broken mid-word."""

    def widths(page):  # noqa: ANN001, ANN202
        page.set_viewport_size({"width": 390, "height": 844})
        try:
            found = {}
            for path in ("/runs/r1", "/runs/r1/matrix", "/compare?base=r1&cand=r2"):
                page.goto(base_url + path)
                page.wait_for_selector("main h1")
                found[path] = page.evaluate("document.documentElement.scrollWidth")
            fields = "[...document.querySelectorAll('.spec-differences code')]"
            fields += ".map(e => e.getClientRects().length)"
            found["field lines"] = set(page.evaluate(fields))  # the compare page's, last: one line each
            screenshot(page, "matrix-phone")
            return found
        finally:
            page.set_viewport_size({"width": 1280, "height": 900})

    expected = {"/runs/r1": 390, "/runs/r1/matrix": 390, "/compare?base=r1&cand=r2": 390, "field lines": {1}}
    assert browser.call(widths) == expected
