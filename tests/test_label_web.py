"""Labelling in the web view over real HTTP (`engine serve` in a subprocess): the token guards the
write route, a label lands in the log, and the queue shows first where the judges disagree."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from tests.conftest import run_engine
from tests.label_runs import judged_run
from tests.serve_helpers import serving

LABEL = {"case": "c3", "variant": "baseline", "repeat": 1, "verdict": "fail", "note": "wrong"}


def labels_in_report(tmp_path: Path) -> int:
    done = run_engine("report", "lab", "--json", "--store", "st", cwd=tmp_path)
    section = json.loads(done.stdout)["label_agreement"]
    return 0 if section is None else section["labels"]


async def test_without_a_token_the_view_cannot_label(tmp_path: Path) -> None:
    await judged_run(tmp_path / "st")
    with serving(tmp_path / "st") as url:
        refused = httpx.post(f"{url}/api/runs/lab/labels", json=LABEL)
        page = httpx.get(f"{url}/runs/lab/trial", params={"case": "c3", "variant": "baseline"}).text
        state = httpx.get(f"{url}/api/runs/lab/labels").json()
        run_page = httpx.get(f"{url}/runs/lab").text
    assert "No labels yet" in run_page and 'href="/runs/lab/labels"' in run_page
    assert refused.status_code == 403 and "engine serve --token" in refused.json()["error"]
    assert 'class="label-pass"' not in page and "this view is read-only" in page
    assert state["can_label"] is False and state["agreement"]["labels"] == 0
    assert labels_in_report(tmp_path) == 0


async def test_the_token_guards_the_label_route_and_a_label_lands_in_the_log(tmp_path: Path) -> None:
    await judged_run(tmp_path / "st", strict=True)
    secret = {"Authorization": "Bearer label-token-0123456789"}
    with serving(tmp_path / "st", "--token", "label-token-0123456789") as url:
        api = f"{url}/api/runs/lab/labels"
        assert httpx.post(api, json=LABEL).status_code == 401
        assert httpx.post(api, json=LABEL, headers={"Authorization": "Bearer nope"}).status_code == 401
        form = httpx.post(api, data={k: str(v) for k, v in LABEL.items()}, headers=secret)
        assert form.status_code == 415  # a cross-site form post cannot label
        bad = httpx.post(api, json={**LABEL, "verdict": "meh"}, headers=secret)
        assert bad.status_code == 400 and "verdict: expected pass or fail" in bad.json()["error"]
        assert labels_in_report(tmp_path) == 0
        done = httpx.post(api, json=LABEL, headers=secret)
        assert done.status_code == 200, done.text
        body = done.json()
        queue = httpx.get(f"{url}/runs/lab/labels", headers=secret).text
        trial = httpx.get(f"{url}/runs/lab/trial", params={"case": "c0"}, headers=secret).text
        api_report = httpx.get(f"{url}/api/runs/lab", headers=secret).content
        run_page = httpx.get(f"{url}/runs/lab", headers=secret).text
    assert "1 labelled outputs" in run_page and "<td>strict</td>" in run_page
    cli_report = run_engine("report", "lab", "--json", "--store", "st", cwd=tmp_path).stdout
    assert api_report.strip() == cli_report.strip() and b'"label_agreement":{' in api_report
    assert body["agreement"]["labels"] == 1 and body["agreement"]["judges"][0]["tn"] == 0
    assert body["next"].startswith("/runs/lab/trial?case=c0&variant=baseline&repeat=1")
    assert labels_in_report(tmp_path) == 1  # in the log, seen by another process
    # the two judges split on c0 and c1: they come first; c3 (labelled) comes after the unlabelled
    rows = queue.split("<tbody>")[1].split("</tr>")
    assert "c0 #1" in rows[0] and "judges split" in rows[0] and "c1 #1" in rows[1]
    assert "c3 #1" in rows[-2] and 'class="badge fail"' in rows[-2]
    assert 'class="label-pass"' in trial and "/static/labels.js" in trial


async def test_the_trial_page_reads_the_queue_only_when_n_asks_for_the_next(tmp_path: Path) -> None:
    """The trial page's panel names a route, not a trial: the queue (every trial's verdicts) is read
    when `n` follows it, and it leads past the page's own case to the queue's first unlabelled trial."""
    await judged_run(tmp_path / "st")
    with serving(tmp_path / "st") as url:
        page = httpx.get(f"{url}/runs/lab/trial", params={"case": "c0", "variant": "baseline"}).text
        from_c0 = httpx.get(f"{url}/runs/lab/labels/next", params={"case": "c0", "variant": "baseline"})
        from_c1 = httpx.get(f"{url}/runs/lab/labels/next", params={"case": "c1", "variant": ""})
    assert 'data-next="/runs/lab/labels/next?case=c0&amp;variant=baseline"' in page
    # the judges split on c0 and c1 (the queue's first two); from c0's page `n` goes to c1, from c1's to c0
    assert from_c0.status_code == 303 and from_c0.headers["location"].startswith("/runs/lab/trial?case=c1&")
    assert from_c1.status_code == 303 and from_c1.headers["location"].startswith("/runs/lab/trial?case=c0&")


async def test_a_run_without_labels_is_not_walked_for_them(tmp_path: Path, monkeypatch: object) -> None:
    """The trial page's panel asks the run's kept heads first: without a label it reads none of the
    run's events (a walk of a big run's index was most of its first load); with one it reads them."""
    from engine.input.labels_file import LabelRow
    from engine.runtime.label_record import record_labels
    from engine.store.open import open_event_log
    from engine.web import label_pages
    from engine.web.context import WebContext

    await judged_run(tmp_path / "st")
    walked: list[str] = []
    real = label_pages.load_labelled
    spy = lambda log, run: walked.append(run) or real(log, run)  # noqa: E731
    monkeypatch.setattr(label_pages, "load_labelled", spy)  # type: ignore[attr-defined]
    log = open_event_log(tmp_path / "st")
    try:
        assert label_pages._labelled(WebContext(log), "lab", None).labels == {} and walked == []
        record_labels(log, "lab", [("r1", LabelRow(case="c8", variant="baseline", repeat=1, verdict="pass"))])
        state = label_pages._labelled(WebContext(log), "lab", None)
    finally:
        log.close()
    assert walked == ["lab"] and state.label_of(("baseline", "c8", 0)).verdict == "pass"  # type: ignore[union-attr]
