"""`engine serve`'s JSON API: httpx against the real server (a subprocess) on a real store."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
import trio

from engine.events import kinds as k
from engine.events.codec import encode
from engine.store.open import open_event_log
from tests.conftest import SAFETY_S, run_engine
from tests.fixtures.agent import SCRIPT_OUTPUT
from tests.serve_helpers import make_store, serving


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_store(tmp_path_factory.mktemp("serve"))


@pytest.fixture(scope="module")
def base_url(store: Path):
    with serving(store) as url:
        yield url


def get(base_url: str, path: str, **params: object) -> httpx.Response:
    return httpx.get(base_url + path, params=params, timeout=SAFETY_S)


def test_runs_list_shows_every_run_with_its_status_and_pass_rate(base_url: str) -> None:
    runs = get(base_url, "/api/runs").json()
    assert [r["run_id"] for r in runs] == ["r1", "r2"]
    for run in runs:
        assert run["experiment"] == "capitals" and run["status"] == "completed"
        assert 0 < run["pass_rate"] < 1 and run["trials_total"] == 3 * 6 * 3


def test_run_api_is_byte_identical_to_engine_report_json(store: Path, base_url: str) -> None:
    cli = run_engine("report", "r1", "--json", "--store", str(store), cwd=store.parent)
    assert cli.returncode == 0
    assert get(base_url, "/api/runs/r1").content + b"\n" == cli.stdout


def test_trials_are_filtered_and_paginated_with_everything_a_trial_holds(base_url: str) -> None:
    everything = get(base_url, "/api/runs/r1/trials", limit=500).json()
    assert everything["total"] == len(everything["trials"]) == 3 * 6 * 3
    pages = [get(base_url, "/api/runs/r1/trials", limit=10, offset=o).json() for o in range(0, 60, 10)]
    assert [t for p in pages for t in p["trials"]] == everything["trials"]
    assert {p["total"] for p in pages} == {54}
    failing = get(base_url, "/api/runs/r1/trials", status="fail", variant="baseline").json()
    assert (
        failing["total"]
        == sum(t["status"] == "fail" and t["variant"] == "baseline" for t in everything["trials"])
        > 0
    )
    trial = failing["trials"][0]
    assert trial["prompt"].startswith("What is the capital") and trial["output"] == "I am not sure."
    assert trial["grades"][0]["passed"] is False and trial["retries"] == 0
    shown = {"latency_ms", "tokens_in", "tokens_out", "cost_usd", "error_class", "judge_rationale", "system"}
    assert shown <= set(trial)
    tagged = get(base_url, "/api/runs/r1/trials", tag="geo").json()
    assert {t["case"] for t in tagged["trials"]} == {"c000", "c001"}
    found = get(base_url, "/api/runs/r1/trials", q="window.__pwned").json()
    assert found["total"] == 6 * 3 and {t["output"] for t in found["trials"]} == {SCRIPT_OUTPUT}
    one = get(base_url, "/api/runs/r1/trials", case="c003", variant="cold").json()
    assert [t["repeat"] for t in one["trials"]] == [1, 2, 3]


def test_compare_lists_metric_deltas_and_case_changes(base_url: str) -> None:
    result = get(base_url, "/api/compare", base="r1", cand="r2").json()
    assert result["baseline_run"] == "r1" and result["candidate_run"] == "r2"
    assert {m["variant"] for m in result["metrics"]} == {"baseline", "cold", "xss"}
    assert isinstance(result["newly_failing"], list) and isinstance(result["newly_passing"], list)
    for change in result["newly_failing"]:  # significant on the case's replicas: as `engine compare`
        assert change["p_value_adjusted"] < 0.05
    for change in result["verdict_changes"]["failing"]:  # any verdict change, significant or not
        assert change["base"] == "pass" and change["cand"] in ("fail", "flaky")


def test_bad_requests_get_one_clear_error(base_url: str) -> None:
    missing = get(base_url, "/api/runs/nope")
    assert missing.status_code == 404 and "nope" in missing.json()["error"]
    bad = get(base_url, "/api/runs/r1/trials", limit="many")
    assert bad.status_code == 400 and "integer" in bad.json()["error"]
    assert get(base_url, "/api/compare", base="r1").status_code == 400


async def test_events_stream_progress_summaries_and_resume_from_last_event_id(
    store: Path, base_url: str
) -> None:
    with trio.fail_after(SAFETY_S):  # a hang guard only: every wait below is on an event
        async with httpx.AsyncClient(timeout=SAFETY_S) as client:
            with open_event_log(store) as log:
                tail = log.last_seq()
                async with client.stream("GET", f"{base_url}/api/runs/r1/events?after={tail}") as stream:
                    lines = stream.aiter_lines()
                    first, name = await _next_event(lines)  # the state it starts from
                    assert name == "progress" and int(first) <= tail
                    event = encode(k.CancelRequested(run_id="r1", by="test"))
                    seq = log.append([("r1", "cancel.requested", event)])
                    # a summary, not the event: its id is the last sequence number it covers
                    assert await _next_event(lines) == (str(seq), "progress")
            headers = {"Last-Event-ID": str(seq - 1)}
            async with client.stream("GET", f"{base_url}/api/runs/r1/events", headers=headers) as stream:
                assert await _next_event(stream.aiter_lines()) == (str(seq), "progress")


async def _next_event(lines) -> tuple[str, str]:  # noqa: ANN001
    """(id, event) of the next SSE event; its data must be JSON."""
    seq, name = "", ""
    async for line in lines:
        if line.startswith("id: "):
            seq = line[4:]
        elif line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            json.loads(line[6:])
            return seq, name
    raise AssertionError("the stream ended")


def test_binding_beyond_localhost_needs_a_token(store: Path) -> None:
    refused = run_engine("serve", "--store", str(store), "--host", "0.0.0.0", cwd=store.parent)
    assert refused.returncode == 2 and b"--token" in refused.stderr and b"Traceback" not in refused.stderr
    # a store that does not exist yet is waited for (tests/test_serve_states.py)


TOKEN = "s3cret-s3cret-s3cret"


def test_a_token_guards_every_request(store: Path) -> None:
    with serving(store, "--token", TOKEN) as url:
        assert httpx.get(f"{url}/api/runs", timeout=SAFETY_S).status_code == 401
        bearer = httpx.get(f"{url}/api/runs", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=SAFETY_S)
        assert bearer.status_code == 200
        with httpx.Client(timeout=SAFETY_S) as browser:
            first = browser.get(f"{url}/api/runs", params={"token": TOKEN})
            assert first.status_code == 200 and "engine_token" in first.headers["set-cookie"]
            assert browser.get(f"{url}/api/runs").status_code == 200  # the cookie carries it
        assert httpx.get(f"{url}/api/runs", params={"token": "wrong"}, timeout=SAFETY_S).status_code == 401


def test_matrix_filters_match_the_cells_verdicts(base_url: str) -> None:
    every = get(base_url, "/api/runs/r1/matrix").json()
    assert every["variants"] == ["baseline", "cold", "xss"] and every["total"] == 6

    def verdicts(row: dict) -> list[str]:
        return [row["cells"][v]["verdict"] for v in every["variants"]]

    expected = {
        # errors are not failures: they have their own filter
        "failing": {r["case"] for r in every["rows"] if {"fail", "flaky"} & set(verdicts(r))},
        "errors": {r["case"] for r in every["rows"] if any(c["errors"] for c in r["cells"].values())},
        "flaky": {r["case"] for r in every["rows"] if "flaky" in verdicts(r)},
        "regressed": {
            r["case"] for r in every["rows"]
            if verdicts(r)[0] == "pass" and {"fail", "flaky"} & set(verdicts(r)[1:])
        },
    }  # fmt: skip
    for show, cases in expected.items():
        shown = get(base_url, "/api/runs/r1/matrix", show=show).json()
        assert {r["case"] for r in shown["rows"]} == cases and shown["total"] == len(cases), show
    for row in every["rows"]:
        for cell in row["cells"].values():
            assert cell["repeats"] == 3 and 0 <= cell["passes"] <= cell["scored"] <= 3
