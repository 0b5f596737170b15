"""Search that lands on the answer and filters that count right, in real headless Chromium and over
the API: a search shows each cell's repeats that match (not its first repeat), marks the match in
the cell and on the trial page, says "k of n repeats match"; the matrix of every repeat; downloads
carry the matching repeats; "grading errors" finds every trial a grader could not judge (an
unparseable judge answer beside a grader that scored it); a bad query parameter is a 400 naming
the choices; the trial page reads at 1280 and 390 px.

The run is made once, for real, by the engine against a fake OpenAI server: some repeats answer
"not sure" (by the trial's seed), and the judge cannot be read on exactly those. Skipped, with the
reason, where Chromium or Playwright is missing; the browser waits on selectors only.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from engine.api import open_engine, spec_from_dict
from tests.browser import BrowserThread, screenshot
from tests.conftest import SAFETY_S, run_engine
from tests.fakes.openai_server import open_fake_openai
from tests.serve_helpers import serving

NEEDLE = "not sure"


def answer(body: dict[str, Any]) -> str:
    """The subject: unsure on a third of its trials (by seed); the judge: garbled on those."""
    messages = body["messages"]
    if "impartial judge" in messages[0]["content"]:
        if NEEDLE in messages[-1]["content"]:
            return "Hmm, <b>hard to say</b>."  # no JSON: judge_unparseable
        return json.dumps({"score": 8, "reason": "names the city"})
    if int(body.get("seed", 0)) % 3 == 0:
        return "I am not sure <i>at all</i>, maybe it is Paris? Or not sure."
    return "It is Paris."


def spec(base_url: str) -> Any:
    target = {"kind": "openai", "base_url": base_url, "model": "m", "max_retries": 0}
    return spec_from_dict({
        "name": "landing", "seed": 11, "target": target, "repeat": {"count": 3},
        "variants": [{"name": "warm", "params": {"temperature": 0.7}},
                     {"name": "cold", "params": {"temperature": 0.1}}],
        "cases": [{"id": f"c{i}", "prompt": f"Which city is number {i}?", "expected": "Paris"}
                  for i in range(6)],
        "graders": [{"kind": "contains", "value": "Paris"}, {"kind": "judge", "name": "judge"}],
    })  # fmt: skip


async def make_run(store: Path) -> None:
    async with open_fake_openai(answer=answer) as server, open_engine(store) as eng:
        await eng.run(spec(server.base_url), run_id="s1")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    made = tmp_path_factory.mktemp("landing") / "st"
    trio.run(make_run, made)
    return made


@pytest.fixture(scope="module")
def base_url(store: Path):
    with serving(store) as url:
        yield url


def api(base_url: str, path: str, **params: object) -> httpx.Response:
    return httpx.get(f"{base_url}{path}", params=params, timeout=SAFETY_S)


def all_trials(base_url: str) -> list[dict]:
    found = api(base_url, "/api/runs/s1/trials", limit=500).json()
    assert found["total"] == 36
    return found["trials"]


def unsure(base_url: str) -> dict[tuple[str, str], list[int]]:
    """(variant, case) -> the repeats (from 1) whose output holds the needle."""
    out: dict[tuple[str, str], list[int]] = {}
    for t in all_trials(base_url):
        if NEEDLE in (t["output"] or ""):
            out.setdefault((t["variant"], t["case"]), []).append(t["repeat"])
    assert out and any(len(r) < 3 for r in out.values())  # some cells hold it in some repeats only
    return out


def test_a_search_shows_and_marks_the_repeats_that_match(browser: BrowserThread, base_url: str) -> None:
    matching = unsure(base_url)

    def search(page):  # noqa: ANN001, ANN202
        page.set_viewport_size({"width": 1280, "height": 800})
        page.goto(f"{base_url}/runs/s1/matrix")
        page.fill("input[name=q]", NEEDLE)
        page.click("form.filters button")
        page.wait_for_selector("td.cell-box[data-matches]")
        screenshot(page, "search-matrix-1280")
        cells = {}
        for box in page.locator("td.cell-box[data-matches]").all():
            case = box.locator("xpath=ancestor::tr").get_attribute("data-case")
            cells[(box.get_attribute("data-variant"), case)] = (
                int(box.get_attribute("data-matches")), box.get_attribute("data-shown-repeat"),
                box.locator("p.matches").inner_text(), box.locator("mark").all_inner_texts(),
            )  # fmt: skip
        return cells, page.evaluate("window.__pwned === undefined")

    cells, nothing_ran = browser.call(search)
    assert nothing_ran
    assert {key for key, (n, *_rest) in cells.items() if n} == set(matching)
    for key, repeats in matching.items():
        n, shown, words, marks = cells[key]
        assert n == len(repeats) and words.startswith(f"{len(repeats)} of 3 repeats match")
        assert int(shown) == repeats[0]  # the first repeat that matches, not the cell's first repeat
        assert marks and {m.lower() for m in marks} == {NEEDLE}


def test_the_trial_page_marks_the_match_and_names_the_repeats(browser: BrowserThread, base_url: str) -> None:
    matching = unsure(base_url)
    (variant, case), repeats = next((k, r) for k, r in matching.items() if len(r) < 3)

    def open_cell(page):  # noqa: ANN001, ANN202
        page.goto(f"{base_url}/runs/s1/matrix?q=not+sure")
        page.click(f'tr[data-case="{case}"] td.cell-box[data-variant="{variant}"] a.cell')
        page.wait_for_selector(".repeat.matched mark")
        screenshot(page, "search-trial-1280")
        shown = [int(r.get_attribute("data-repeat")) for r in page.locator(".repeat.matched").all()]
        note = page.locator(f'[data-field="matches-{variant}"]').inner_text()
        return page.url, shown, note, page.locator(".repeat.matched mark").all_inner_texts()

    url, shown, note, marks = browser.call(open_cell)
    assert "q=not+sure" in url and url.endswith(f"#repeat-{variant}-{repeats[0]}")
    assert shown == repeats and note.startswith(f"{len(repeats)} of 3 repeats match")
    assert marks and all(m.lower() == NEEDLE for m in marks)


def test_the_matrix_shows_every_repeat_as_its_own_row(browser: BrowserThread, base_url: str) -> None:
    matching = unsure(base_url)

    def rows(page):  # noqa: ANN001, ANN202
        page.goto(f"{base_url}/runs/s1/matrix")
        page.click('[data-field="repeats-toggle"]')
        page.wait_for_selector("tr[data-repeat]")
        every = page.locator("tr[data-repeat]").count()
        page.goto(f"{base_url}/runs/s1/matrix?repeats=1&q=not+sure")
        page.wait_for_selector("tr[data-repeat]")
        found = [(r.get_attribute("data-case"), int(r.get_attribute("data-repeat")))
                 for r in page.locator("tr[data-repeat]").all()]  # fmt: skip
        return every, found

    every, found = browser.call(rows)
    assert every == 6 * 3
    assert set(found) == {(case, n) for (_v, case), reps in matching.items() for n in reps}


def test_downloads_of_a_search_carry_the_matching_repeats(base_url: str) -> None:
    matching = unsure(base_url)
    text = api(base_url, "/api/runs/s1/matrix.csv", q=NEEDLE).text
    lines = list(csv.DictReader(io.StringIO(text)))
    assert {(r["variant"], r["case"], int(r["repeat"])) for r in lines} == {
        (v, c, n) for (v, c), reps in matching.items() for n in reps
    }
    assert all(NEEDLE in r["output"] for r in lines)
    cells = api(base_url, "/api/runs/s1/matrix.json", q=NEEDLE, repeats=1).json()["cells"]
    assert len(cells) == len(lines) and all(NEEDLE in c["output"] for c in cells)


def test_grading_errors_finds_every_trial_a_grader_could_not_judge(
    browser: BrowserThread, base_url: str
) -> None:
    trials = all_trials(base_url)
    judged_not = [t for t in trials if any(g.get("error") == "judge_unparseable" for g in t["grades"])]
    assert judged_not and all(t["status"] in ("pass", "fail") for t in judged_not)  # contains scored them
    found = api(base_url, "/api/runs/s1/trials", status="grading_error", limit=500).json()
    assert found["total"] == len(judged_not)
    matrix = api(base_url, "/api/runs/s1/matrix", show="grading_errors").json()
    counted = Counter()
    for row in matrix["rows"]:
        for variant, cell in row["cells"].items():
            counted[(variant, row["case"])] = cell["grading_errors"]
            assert cell["scored"] == 3 and cell["unscored"] == 0  # counted apart from the scored
    assert sum(counted.values()) == len(judged_not)
    landed = {(v, r["case"]): c["matching_repeats"] for r in matrix["rows"] for v, c in r["cells"].items()}
    for (variant, case), repeats in landed.items():  # each cell lands on its trials a grader could not judge
        mine = [t["repeat"] for t in judged_not if (t["variant"], t["case"]) == (variant, case)]
        assert repeats == sorted(mine)
    assert {r["case"] for r in matrix["rows"]} == {t["case"] for t in judged_not}

    def filtered(page):  # noqa: ANN001, ANN202
        page.goto(f"{base_url}/runs/s1/matrix")
        page.select_option("select[name=show]", "grading_errors")
        page.click("form.filters button")
        page.wait_for_url("**show=grading_errors**")
        return page.locator('[data-field="total"]').inner_text()

    assert browser.call(filtered) == str(len({t["case"] for t in judged_not}))


@pytest.mark.parametrize(
    ("path", "params", "named"),
    [
        ("/api/runs/s1/trials", {"status": "bogus"}, "grading_error"),
        ("/api/runs/s1/trials", {"staus": "pass"}, "status"),
        ("/api/runs/s1/trials", {"variant": "hot"}, "cold, warm"),
        ("/api/runs/s1/trials", {"case": "nope"}, "c0"),
        ("/api/runs/s1/trials", {"limit": "ten"}, "integer"),
        ("/api/runs/s1/matrix", {"show": "bogus"}, "grading_errors"),
        ("/api/runs/s1/matrix", {"sort": "up"}, "-score"),
        ("/api/runs/s1/matrix", {"regex": "maybe"}, "0, 1"),
        ("/api/runs/s1/matrix", {"grading": "7"}, "0"),
        ("/api/runs/s1/matrix.csv", {"show": "bogus"}, "failing"),
        ("/api/runs/s1/matrix.json", {"page": "-1"}, "non-negative"),
        ("/api/runs/s1", {"grading": "x"}, "integer"),
        ("/api/runs/s1", {"format": "xml"}, "grading"),
        ("/api/runs", {"limit": "5"}, "no parameters"),
        ("/api/runs/s1/progress", {"verbose": "1"}, "no parameters"),
        ("/api/runs/s1/events", {"after": "soon"}, "integer"),
        ("/api/runs/s1/labels", {"all": "1"}, "no parameters"),
        ("/api/compare", {"base": "s1", "cand": "s1", "alpha": "0.1"}, "base, cand"),
    ],
)
def test_a_bad_query_parameter_is_a_400_naming_the_choices(
    base_url: str, path: str, params: dict[str, str], named: str
) -> None:
    got = api(base_url, path, **params)
    assert got.status_code == 400, got.text
    assert named in got.json()["error"]


@pytest.mark.parametrize("width", [1280, 390])
def test_the_trial_page_reads_at_1280_and_390_px(browser: BrowserThread, base_url: str, width: int) -> None:
    def look(page):  # noqa: ANN001, ANN202
        page.set_viewport_size({"width": width, "height": 800 if width > 400 else 844})
        page.goto(f"{base_url}/runs/s1/trial?case=c0&variant=warm")
        page.wait_for_selector(".grade-head")
        screenshot(page, f"trial-{width}")
        heads = [h.bounding_box() for h in page.locator(".grade-head b").all()]
        prompt = page.locator("details.judge-prompt").first
        prompt.locator("summary").click()
        shown = prompt.locator("pre").last.inner_text()
        wide = page.evaluate("document.documentElement.scrollWidth")
        per_row = len({round(b["y"]) for b in (r.bounding_box() for r in page.locator(".repeat").all())})
        page.locator("h1").click()  # the keys are the page's, not a field's
        page.keyboard.press("l")  # the labelling panel, however far below
        panel = page.locator("#labelling").bounding_box()
        return heads, shown, wide, per_row, panel["y"], page.viewport_size["height"]

    heads, prompt, wide, rows, panel_at, window = browser.call(look)
    assert 0 <= panel_at < window  # in view after one key
    assert heads and all(h["height"] < 30 for h in heads)  # a grader's name on one line, not letter by letter
    assert "<subject_response>" in prompt  # the prompt itself, rebuilt and checked against its fingerprint
    assert wide <= width  # nothing wider than the window
    assert rows == (1 if width == 1280 else 3)  # three repeats side by side at 1280 px, stacked on a phone


def test_the_html_file_finds_grading_errors_one_click_from_the_top(
    browser: BrowserThread, base_url: str, store: Path
) -> None:
    cases = {t["case"] for t in all_trials(base_url) if any(g.get("error") for g in t["grades"])}
    wrote = run_engine("report", "s1", "--store", str(store), "--html", "s1.html", cwd=store.parent)
    assert wrote.returncode == 0, wrote.stderr.decode()

    def open_file(page):  # noqa: ANN001, ANN202
        page.set_viewport_size({"width": 1280, "height": 800})
        page.goto((store.parent / "s1.html").as_uri())
        page.click("#to-matrix")  # the one click from the top
        top = page.locator("#section-matrix").bounding_box()["y"]
        page.select_option("#file-show", "grading_errors")
        shown = [r.get_attribute("data-case") for r in page.locator("table.matrix tbody tr:visible").all()]
        return top, shown

    top, shown = browser.call(open_file)
    assert 0 <= top < 800 and set(shown) == cases  # in view (a short page cannot scroll it higher)


def test_marks_wrap_escaped_text_never_markup(base_url: str) -> None:
    page = api(base_url, "/runs/s1/matrix", q="<i>at").text
    assert "<mark>&lt;i&gt;at</mark> all&lt;/i&gt;" in page and "<i>at" not in page
    regex = api(base_url, "/runs/s1/matrix", q="not su.e", regex="1").text
    assert "<mark>not sure</mark>" in regex
