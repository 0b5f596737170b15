"""`engine serve`'s pages: server-rendered HTML from the real server, every value escaped."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from tests.conftest import SAFETY_S
from tests.serve_helpers import make_store, serving


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory):
    with serving(make_store(tmp_path_factory.mktemp("pages"))) as url:
        yield url


def html(base_url: str, path: str, status: int = 200, **params: object) -> str:
    response = httpx.get(base_url + path, params=params, timeout=SAFETY_S)
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("text/html")
    return response.text


def test_model_output_is_escaped_never_markup(base_url: str) -> None:
    page = html(base_url, "/runs/r1/trial", case="c000", variant="xss")
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in page
    assert "<script>window" not in page and "<img src=x" not in page
    assert page.count('class="repeat"') == 3  # each repeat's output side by side


def test_names_from_the_url_are_escaped_too(base_url: str) -> None:
    page = html(base_url, "/runs/<b>x", status=404)
    assert "&lt;b&gt;x" in page and "<b>x" not in page
    page = html(base_url, "/runs/r1/matrix", q="<i>", tag='"><script>')
    assert 'value="&lt;i&gt;"' in page and "<script>" not in page.split("</head>")[1]
    for path, params in (("/compare", {"base": "<b>x", "cand": "r1"}), ("/history/<b>x", {})):
        page = html(base_url, path, status=404, **params)
        assert "&lt;b&gt;x" in page and "<b>x" not in page


def test_runs_list_links_each_run_and_its_history(base_url: str) -> None:
    page = html(base_url, "/")
    assert 'href="/runs/r1"' in page and 'href="/runs/r2"' in page and 'href="/history/capitals"' in page
    badges = ('class="badge status-ok">completed<', 'class="badge status-warn">completed with errors<')
    assert sum(page.count(badge) for badge in badges) == 2


def test_run_page_has_progress_variants_forest_plot_and_flaky_cases(base_url: str) -> None:
    page = html(base_url, "/runs/r1")
    assert re.search(r'<b data-field="done">54</b> / <span data-field="total">54</span>', page)
    # the report's sections, as every surface shows them: a row per variant in the variants table
    variants = page.split('id="section-variants"')[1].split("</section>")[0]
    for name in ("baseline", "cold", "xss"):
        assert re.search(rf"<tr class=\"\w*\"><td>{name}( \([a-z, ]+\))?</td>", variants), name
    assert page.count('class="ci sig"') + page.count('class="ci ns"') == 2  # two comparisons
    assert re.search(r"<h2>Flaky cases \(\d+\)</h2>", page) and "<h2>By tag (score / pass rate)</h2>" in page
    assert "Budget used" in page


def test_matrix_filters_by_verdict_tag_and_text_and_links_cells_to_trials(base_url: str) -> None:
    every = html(base_url, "/runs/r1/matrix")
    assert every.count('<a class="cell') == 6 * 3
    assert 'href="/runs/r1/trial?case=c000&amp;variant=cold"' in every
    tagged = html(base_url, "/runs/r1/matrix", tag="geo")
    assert set(re.findall(r"case=(c\d+)&amp;variant", tagged)) == {"c000", "c001"}
    one = html(base_url, "/runs/r1/matrix", q="c003")
    assert set(re.findall(r"case=(c\d+)&amp;variant", one)) == {"c003"}
    flaky = html(base_url, "/runs/r1/matrix", show="flaky")
    rows = flaky.split("<tbody>")[1].split("<tr ")[1:]
    assert rows and all('class="cell flaky"' in row for row in rows)


def test_compare_tuning_and_history_pages(base_url: str, tmp_path: Path) -> None:
    compare = html(base_url, "/compare", base="r1", cand="r2")
    assert "Newly failing" in compare and "Metric deltas" in compare
    assert "Gate passes" in compare or "REGRESSED" in compare
    assert "<select" in html(base_url, "/compare")
    history = html(base_url, "/history/capitals")
    assert history.count("<circle") == 2 and 'class="trend"' in history
    tuning = html(base_url, "/runs/r1/tuning")
    assert "Nothing to plot yet" in tuning  # an A/B run has no variations


def test_a_trial_page_shows_the_expected_answer_beside_the_outputs(base_url: str) -> None:
    page = html(base_url, "/runs/r1/trial", case="c002")
    expected = page.split("<h2>Expected / reference</h2>")[1].split("</pre>")[0]
    assert expected.endswith(">City2") and page.index("Expected / reference") < page.index('class="repeat"')
    api = httpx.get(f"{base_url}/api/runs/r1/trials", params={"case": "c002"}, timeout=SAFETY_S).json()
    assert {t["expected"] for t in api["trials"]} == {"City2"}  # the trials API carries it too
