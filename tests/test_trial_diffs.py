"""Within a case, each variant's output beside the baseline's with a word-level diff (the trial page),
from a real server over real runs; in real Chromium, the diff is on the page a reader sees."""

from __future__ import annotations

import httpx
import pytest

from tests.browser import BrowserThread
from tests.conftest import SAFETY_S
from tests.serve_helpers import make_store, serving


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory):
    with serving(make_store(tmp_path_factory.mktemp("trialdiffs"))) as url:
        yield url


def api_outputs(base_url: str, case: str) -> dict[str, str]:
    """Each variant's first repeat's output, from the trials API (the diff's two sides)."""
    found = httpx.get(f"{base_url}/api/runs/r1/trials", params={"case": case}, timeout=SAFETY_S).json()
    out: dict[str, str] = {}
    for t in sorted(found["trials"], key=lambda t: t["repeat"]):
        out.setdefault(t["variant"], t["output"])
    return out


def test_each_variant_is_diffed_against_the_baseline_word_by_word(base_url: str) -> None:
    page = httpx.get(f"{base_url}/runs/r1/trial", params={"case": "c000"}, timeout=SAFETY_S).text
    section = page.split('<section id="vs-baseline">')[1].split("</section>")[0]
    assert "Against the baseline baseline" in section
    xss = section.split('data-variant="xss"')[1].split('data-variant=')[0]
    outputs = api_outputs(base_url, "c000")
    # the baseline's answer struck out on its side, the other variant's words marked on the other
    assert f"<del>{outputs['baseline']}</del>" in xss
    assert "<ins>&lt;script&gt;window.__pwned " in xss and "<script>" not in xss
    assert 'data-variant="cold"' in section and 'data-variant="baseline"' not in section


def test_the_diff_is_shown_side_by_side_in_a_browser(browser: BrowserThread, base_url: str) -> None:
    def open_case(page):  # noqa: ANN001, ANN202
        page.goto(f"{base_url}/runs/r1/trial?case=c000")
        pair = page.wait_for_selector('#vs-baseline [data-variant="xss"] .diff-pair')
        sides = pair.query_selector_all("pre.diff")
        boxes = [s.bounding_box() for s in sides]
        return [s.inner_text() for s in sides], boxes, page.evaluate("window.__pwned === undefined")

    texts, boxes, not_run = browser.call(open_case)
    outputs = api_outputs(base_url, "c000")
    assert texts == [outputs["baseline"], outputs["xss"]] and not_run
    assert boxes[0]["x"] < boxes[1]["x"] and boxes[0]["y"] == boxes[1]["y"]  # side by side at 1280 px
