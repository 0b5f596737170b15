"""Reuse across runs, counted at a real-socket fake OpenAI server: a request an earlier run sent is
not sent again, repeat i takes an earlier repeat i only, and the report says so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from engine.actors.targets.fingerprint import fingerprint_of, request_fields
from engine.api import open_engine, spec_from_dict
from engine.events import kinds as k
from engine.events.codec import to_json
from engine.store.open import open_event_log
from engine.store.projection import run_events
from tests.conftest import run_engine
from tests.fakes.openai_server import open_fake_openai

VOLATILE = {"run_id", "latency_ms", "started_at", "finished_at", "duration_s", "wall_time_s", "reuse"}


def answer(body: dict[str, Any]) -> str:
    """A different answer per request (its seed and prompt): reusing the wrong one would show."""
    return f"42 from {body['messages'][-1]['content']} seed {body['seed']}"


def definition(url: str, variants: int = 2, repeats: int = 1, **extra: Any) -> dict[str, Any]:
    return {
        "name": "reuse", "seed": 7,
        "target": {"kind": "openai", "base_url": url, "model": "m", "max_retries": 0},
        "variants": [{"name": f"v{i}", "params": {"temperature": i / 10}} for i in range(variants)],
        "cases": [{"id": f"c{i}", "prompt": f"question {i}", "expected": "42"} for i in range(3)],
        "repeat": {"count": repeats},
        **extra,
    }  # fmt: skip


def strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: strip(v) for key, v in value.items() if key not in VOLATILE}
    if isinstance(value, list):
        return [strip(v) for v in value]
    return value


async def run(store: Path, spec: dict[str, Any], run_id: str) -> dict[str, Any]:
    async with open_engine(store) as eng:
        report = await eng.run(spec_from_dict(spec), run_id=run_id)
    return json.loads(to_json(report))  # type: ignore[no-any-return]


def reused(store: Path, run_id: str) -> list[k.TrialReused]:
    with open_event_log(store) as log:
        return [e for e in run_events(log, run_id) if isinstance(e, k.TrialReused)]


def completed(store: Path, run_id: str) -> list[k.TrialCompleted]:
    with open_event_log(store) as log:
        return [e for e in run_events(log, run_id) if type(e) is k.TrialCompleted]


async def test_a_second_run_with_reuse_sends_nothing_and_reports_the_same(tmp_path: Path) -> None:
    async with open_fake_openai(answer=answer) as server:
        first = await run(tmp_path, definition(server.base_url), "first")
        sent = server.received
        assert sent == 6
        second = await run(tmp_path, definition(server.base_url, reuse={"from": "store"}), "second")
        assert server.received == sent, "a reused trial was sent"
    assert strip(second) == strip(first)
    taken = reused(tmp_path, "second")
    assert len(taken) == 6 and {e.source_run for e in taken} == {"first"}
    by_key = {(e.variant, e.case, e.repeat): e.output_hash for e in completed(tmp_path, "first")}
    assert {(e.variant, e.case, e.repeat): e.output_hash for e in taken} == by_key


async def test_only_the_new_variant_and_the_changed_case_are_sent(tmp_path: Path) -> None:
    async with open_fake_openai(answer=answer) as server:
        await run(tmp_path, definition(server.base_url, variants=8), "eight")
        before = server.received
        await run(tmp_path, definition(server.base_url, variants=9, reuse={}), "nine")
        sent = server.requests[before:]
        assert len(sent) == 3 and {r.body["temperature"] for r in sent} == {0.8}
        changed = definition(server.base_url, variants=9, reuse={"from": "last"})
        changed["cases"][1]["prompt"] = "question 1, reworded"
        before = server.received
        await run(tmp_path, changed, "reworded")
        sent = server.requests[before:]
        assert len(sent) == 9 and {r.body["messages"][-1]["content"] for r in sent} == {
            "question 1, reworded"
        }


async def test_k_repeats_reuse_k_distinct_samples_and_missing_repeats_run(tmp_path: Path) -> None:
    async with open_fake_openai(answer=answer) as server:
        await run(tmp_path, definition(server.base_url, variants=1, repeats=5), "five")
        before = server.received
        await run(tmp_path, definition(server.base_url, variants=1, repeats=7, reuse={}), "seven")
        sent = server.requests[before:]
    taken = reused(tmp_path, "seven")
    assert len(taken) == 15 and len(sent) == 6  # repeats 6 and 7 of the 3 cases were sent
    for case in ("c0", "c1", "c2"):
        mine = [e for e in taken if e.case == case]
        assert sorted(e.repeat for e in mine) == list(range(5))
        assert len({e.output_hash for e in mine}) == 5, "one answer served for several repeats"


async def test_the_fingerprint_is_made_of_what_the_server_receives(tmp_path: Path) -> None:
    """docs/reuse.md's field list, held: the body the fake server got is the fingerprint's body."""
    from engine.actors.targets.target_protocol import resolve_target
    from engine.events.spec import ExperimentSpec
    from engine.runtime.plan import build_plan

    async with open_fake_openai(answer=answer) as server:
        spec_dict = definition(server.base_url, variants=1)
        spec_dict["variants"][0]["system"] = "be brief"
        spec_dict["cases"][0]["context"] = "some context"
        await run(tmp_path, spec_dict, "one")
        received = {r.body["messages"][-1]["content"]: r for r in server.requests}
    spec: ExperimentSpec = spec_from_dict(spec_dict)
    plan = build_plan(spec, "one", list(spec.variants), lambda key: "")
    logged = {(e.case, e.repeat): e.fingerprint for e in completed(tmp_path, "one")}
    for case in spec.cases:
        job = plan.make_job(spec.variants[0], case, 0)
        fields = request_fields(resolve_target(spec.target, spec.variants[0]), job.request)
        assert set(fields) == {"v", "kind", "repeat", "url", "body", "headers", "query"}  # docs/reuse.md
        assert fields["body"] == received[case.prompt].body
        assert fields["url"] == server.base_url + "/chat/completions" and received[case.prompt].path.endswith(
            "/chat/completions"
        )
        assert fingerprint_of(fields) == job.fingerprint == logged[(case.id, 0)]


async def test_errors_are_never_reused(tmp_path: Path) -> None:
    def second_case_fails(n: int, body: dict[str, Any]) -> str | None:
        return "500" if body["messages"][-1]["content"] == "question 1" else None

    async with open_fake_openai(answer=answer, faults=second_case_fails) as s:
        await run(tmp_path, definition(s.base_url, variants=1), "flaky")
        s.faults = None
        before = s.received
        await run(tmp_path, definition(s.base_url, variants=1, reuse={}), "again")
        sent = s.requests[before:]
    assert [r.body["messages"][-1]["content"] for r in sent] == ["question 1"]


def aged_copy(store: Path, run_id: str, new_id: str, days: float) -> None:
    """The run's events again as run `new_id`, every timestamp `days` earlier: an older run."""
    from engine.events.codec import encode

    shift = days * 86400
    with open_event_log(store) as log:
        events = list(run_events(log, run_id))
        rows = []
        for e in events:
            changes: dict[str, Any] = {"run_id": new_id, "ts": e.ts - shift}
            if isinstance(e, k.TrialReused):
                changes["source_ts"] = e.source_ts - shift
            rows.append((new_id, k.tag_of(type(e)), encode(msgspec.structs.replace(e, **changes))))
        log.append(rows)


async def test_the_report_says_what_was_reused_and_warns_of_different_days(tmp_path: Path) -> None:
    async with open_fake_openai(answer=answer) as server:
        await run(tmp_path, definition(server.base_url, variants=1), "fresh")
        aged_copy(tmp_path, "fresh", "old", days=3)
        report = await run(tmp_path, definition(server.base_url, reuse={"from": ["old"]}), "mixed")
        bounded = definition(server.base_url, variants=1, reuse={"from": ["old"], "max_age": "2d"})
        before = server.received
        await run(tmp_path, bounded, "bounded")
        assert server.received - before == 3, "an output older than max_age was reused"
    baseline, candidate = report["variants"]
    assert baseline["reuse"]["trials"] == 3 and baseline["reuse"]["sent"] == 0
    assert baseline["reuse"]["sources"] == {"old": 3}
    assert 3 * 86400 <= baseline["reuse"]["oldest_age_s"] < 3 * 86400 + 60
    assert baseline["reuse"]["tokens_saved"] == baseline["tokens"]["in"] + baseline["tokens"]["out"]
    assert "reuse" not in candidate  # all sent
    assert any("v1's outputs were made on" in w and "baseline v0" in w for w in report["warnings"])


LOCAL = """
name = "cli-reuse"
[target]
kind = "local"
[[variants]]
name = "a"
[[cases]]
id = "c1"
prompt = "What is 2+2?"
expected = "4"
"""


def test_bad_reuse_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "e.toml").write_text(LOCAL)
    unknown = run_engine("run", "e.toml", "-q", "--store", "s", "--reuse=nope", cwd=tmp_path)
    assert unknown.returncode == 2
    assert unknown.stderr.decode().strip().splitlines()[-1] == (
        f"error: {tmp_path / 'e.toml'}: reuse.from: no run 'nope' in this store to reuse from"
    )
    (tmp_path / "bad.toml").write_text(LOCAL + '\n[reuse]\nmax_age = "a week"\n')
    bad_age = run_engine("run", "bad.toml", "-q", "--store", "s", cwd=tmp_path)
    lines = bad_age.stderr.decode().strip().splitlines()
    assert bad_age.returncode == 2 and len(lines) == 1 and "reuse.max_age" in lines[0] and "'7d'" in lines[0]


def test_reuse_alone_takes_any_run_and_no_reuse_sends_everything(tmp_path: Path) -> None:
    (tmp_path / "e.toml").write_text(LOCAL + "\n[reuse]\nenabled = false\n")
    first = run_engine("run", "e.toml", "-q", "--store", "s", "--json", cwd=tmp_path)
    again = run_engine("run", "e.toml", "-q", "--store", "s", "--reuse", "--json", cwd=tmp_path)
    fresh = run_engine("run", "e.toml", "-q", "--store", "s", "--no-reuse", "--json", cwd=tmp_path)
    first_id = json.loads(first.stdout)["run_id"]
    assert json.loads(again.stdout)["variants"][0]["reuse"]["sources"] == {first_id: 1}
    assert "reuse" not in json.loads(fresh.stdout)["variants"][0]


async def test_an_imported_bundle_is_a_reuse_source(tmp_path: Path) -> None:
    """The CI recipe: the last green run's bundle imported on another store; the baseline is reused,
    only the changed candidate is sent."""
    from engine.input.bundle_files import load_bundle
    from engine.runtime.bundle_import import import_bundle
    from engine.views.export import bundle as bundle_export

    async with open_fake_openai(answer=answer) as server:
        await run(tmp_path / "ci", definition(server.base_url), "green")
        with open_event_log(tmp_path / "ci") as log:
            bundle_export.write(log, "green", tmp_path / "green.bundle")
        with open_event_log(tmp_path / "dev") as log:
            import_bundle(log, load_bundle(tmp_path / "green.bundle"), "green.bundle", None)
        changed = definition(server.base_url, reuse={"from": ["green"]})
        changed["variants"][1]["params"]["temperature"] = 0.3
        before = server.received
        report = await run(tmp_path / "dev", changed, "candidate")
        sent = server.requests[before:]
    assert len(sent) == 3 and {r.body["temperature"] for r in sent} == {0.3}
    assert report["variants"][0]["reuse"]["sources"] == {"green": 3}
    # the reusing run's own bundle carries the outputs it reused: it replays on a store without "green"
    from engine.views.queries import replay_json

    with open_event_log(tmp_path / "dev") as log:
        bundle_export.write(log, "candidate", tmp_path / "candidate.bundle")
    with open_event_log(tmp_path / "elsewhere") as log:
        import_bundle(log, load_bundle(tmp_path / "candidate.bundle"), "candidate.bundle", None)
        assert "green" not in log.run_ids()
        assert strip(json.loads(replay_json(log, "candidate"))) == strip(report)


async def test_plan_says_what_a_run_would_reuse_and_send_without_calling(tmp_path: Path) -> None:
    from engine.input.experiment_plan import resolve
    from engine.runtime.reuse_plan import plan_reuse

    async with open_fake_openai(answer=answer) as server:
        await run(tmp_path, definition(server.base_url, variants=2), "two")
        before = server.received
        spec = spec_from_dict(definition(server.base_url, variants=3, reuse={}))
        with open_event_log(tmp_path) as log:
            planned = plan_reuse(log, resolve(spec, "exp", tmp_path))
        assert server.received == before, "planning called the model"
        assert (planned.reused, planned.sent, dict(planned.sources)) == (6, 3, {"two": 6})
        assert [(v.name, v.reused.trials, v.sent) for v in planned.variants] == [
            ("v0", 3, 0),
            ("v1", 3, 0),
            ("v2", 0, 3),
        ]
        estimate = planned.estimate()
        assert (
            estimate is not None and estimate[0] == planned.variants[0].reused.tokens
        )  # same prompts' sizes
        await run(tmp_path, definition(server.base_url, variants=3, reuse={}), "three")
        assert server.received - before == planned.sent


def test_engine_plan_prints_the_counts_and_refuses_an_unknown_run(tmp_path: Path) -> None:
    (tmp_path / "e.toml").write_text(LOCAL)
    run_engine("run", "e.toml", "-q", "--store", "s", "--run-id", "base", cwd=tmp_path)
    planned = run_engine("plan", "e.toml", "--store", "s", "--reuse", cwd=tmp_path)
    assert planned.returncode == 0
    lines = planned.stdout.decode().splitlines()
    assert lines[:2] == ["1 trials: 1 reused, 0 to send", "reused from: base (1)"]
    off = run_engine("plan", "e.toml", "--store", "s", "--json", cwd=tmp_path)
    assert json.loads(off.stdout)["sent"] == 1 and json.loads(off.stdout)["reuse"] is False
    unknown = run_engine("plan", "e.toml", "--store", "s", "--reuse=nope", cwd=tmp_path)
    assert unknown.returncode == 2 and unknown.stderr.decode().count("\n") == 1


def judged(body: dict[str, Any]) -> str:
    """Subject answers by request; the judge scores by case (one judge call per trial)."""
    if "impartial judge" not in body["messages"][0]["content"]:
        return answer(body)
    return json.dumps({"score": 9 if "question 0" in body["messages"][-1]["content"] else 3, "reason": "r"})


async def test_judge_calls_are_reused_by_their_own_fingerprint_and_said_per_grade(tmp_path: Path) -> None:
    graders = [{"kind": "judge", "name": "judge"}]
    async with open_fake_openai(answer=judged) as server:
        first = await run(tmp_path, definition(server.base_url, graders=graders), "judged")
        assert server.received == 12  # 6 trials, 6 judge calls
        second = await run(tmp_path, definition(server.base_url, graders=graders, reuse={}), "again")
        assert server.received == 12, "a reused output's judge call was made again"
        stricter = [{"kind": "judge", "name": "judge", "threshold": 0.9}]
        await run(tmp_path, definition(server.base_url, graders=stricter, reuse={}), "stricter")
        assert server.received == 18, "another judge (a new threshold) must judge again"
    assert strip(second) == strip(first)
    with open_event_log(tmp_path) as log:
        grades = [g for e in run_events(log, "again") if isinstance(e, k.TrialGraded) for g in e.grades]
        fresh = [g for e in run_events(log, "judged") if isinstance(e, k.TrialGraded) for g in e.grades]
    assert len(grades) == 6 and {g.reused_from for g in grades} == {"judged"}
    assert all(g.fingerprint for g in fresh) and not any(g.reused_from for g in fresh)


async def test_compare_names_outputs_made_on_different_days(tmp_path: Path) -> None:
    from engine.runtime.run_status import run_state
    from engine.views.compare.comparison import compare_states

    async with open_fake_openai(answer=answer) as server:
        await run(tmp_path, definition(server.base_url, variants=1), "fresh")
        aged_copy(tmp_path, "fresh", "old", days=3)
        await run(tmp_path, definition(server.base_url, variants=1, reuse={"from": ["old"]}), "reusing")
        await run(tmp_path, definition(server.base_url, variants=1), "today")
    with open_event_log(tmp_path) as log:
        mixed = compare_states(run_state(log, "today"), run_state(log, "reusing"))
        plain = compare_states(run_state(log, "fresh"), run_state(log, "today"))
    assert any("candidate run's on" in w and "reused from earlier runs" in w for w in mixed.warnings)
    assert not any("reused" in w for w in plain.warnings)


async def test_the_web_run_page_shows_the_reused_share_and_links_the_sources(tmp_path: Path) -> None:
    from engine.events.report import RunReport
    from engine.presentation.templates import render
    from engine.web.run_page import figures

    async with open_fake_openai(answer=answer) as server:
        await run(tmp_path, definition(server.base_url, variants=1), "first")
        mixed = await run(tmp_path, definition(server.base_url, variants=2, reuse={}), "mixed")
    report = msgspec.json.decode(json.dumps(mixed), type=RunReport)
    page = render("run_report.html", **figures(report, "/root"))
    assert "3 trials (50% of the outputs) reused, not sent" in page
    assert '<a href="/root/runs/first">first</a> (3)' in page


async def test_the_export_names_each_trials_fingerprint_and_source(tmp_path: Path) -> None:
    from engine.presentation.formats import export_run
    from engine.web.pages_more import _source

    async with open_fake_openai(answer=answer) as server:
        await run(tmp_path, definition(server.base_url, variants=1), "first")
        await run(tmp_path, definition(server.base_url, variants=2, reuse={}), "mixed")
    lines: list[str] = []
    with open_event_log(tmp_path) as log:
        export_run(log, "mixed", "jsonl", None, lines.append)
    rows = [json.loads(line) for text in lines for line in text.splitlines() if line.strip()]
    assert len(rows) == 6 and all(len(r["fingerprint"]) == 32 for r in rows)
    by_variant = {r["variant"]: r["reused_from"] for r in rows if r["case"] == "c1"}
    assert by_variant == {"v0": {"run": "first", "variant": "v0", "case": "c1", "repeat": 1}, "v1": None}
    words, link = _source(by_variant["v0"], "/root")  # type: ignore[misc]
    assert link == "/root/runs/first/trial?case=c1&variant=v0" and words.startswith("run first")


async def test_reused_judge_calls_are_not_new_judge_spend(tmp_path: Path) -> None:
    from engine.runtime.run_status import run_state

    graders = [{"kind": "judge", "name": "judge"}]
    async with open_fake_openai(answer=judged) as server:
        await run(tmp_path, definition(server.base_url, graders=graders), "judged")
        report = await run(tmp_path, definition(server.base_url, graders=graders, reuse={}), "again")
    with open_event_log(tmp_path) as log:
        state = run_state(log, "again")
    judge_tokens = sum(v["judge_tokens"] for v in report["variants"])
    assert judge_tokens > 0 and state.judge_tokens_spent() == 0 and state.tokens_used == 0
    assert sum(v["reuse"]["judge_tokens_saved"] for v in report["variants"]) == judge_tokens


AGENT = (
    "import json, os, sys; print(json.dumps({'argv': sys.argv[1:], 'stdin': sys.stdin.read(), 'env': "
    "{k: v for k, v in os.environ.items() if k.startswith(('ENGINE_', 'GREETING')) "
    "and k not in ('ENGINE_METRICS_FILE', 'ENGINE_TRANSCRIPT')}}))"
)


async def test_a_command_agents_fingerprint_is_made_of_what_it_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/reuse.md's command fields: the argv as filled, stdin, and the environment the agent gets
    (the file's env and the ENGINE_* variables), as the agent itself reports them."""
    import os
    import sys

    # the agent inherits the caller's environment, which is not in the fingerprint: CI's own ENGINE_* settings
    for name in [name for name in os.environ if name.startswith("ENGINE_")]:
        monkeypatch.delenv(name)

    from engine.actors.targets.target_protocol import resolve_target
    from engine.runtime.plan import build_plan
    from engine.store.blobs import read_text

    spec_dict = {
        "name": "agent", "seed": 2,
        "target": {"kind": "command", "command": [sys.executable, "-c", AGENT, "{{ flags.mode }}"],
                   "env": {"GREETING": "hi"}},
        "variants": [{"name": "a", "flags": {"mode": "fast"}, "params": {"depth": 2}, "system": "be brief"}],
        "cases": [{"id": "c0", "prompt": "do it", "expected": "x"}],
    }  # fmt: skip
    await run(tmp_path, spec_dict, "agent")
    spec = spec_from_dict(spec_dict)
    job = build_plan(spec, "agent", list(spec.variants), lambda key: "").make_job(
        spec.variants[0], spec.cases[0], 0
    )
    fields = request_fields(resolve_target(spec.target, spec.variants[0]), job.request)
    done = completed(tmp_path, "agent")[0]
    with open_event_log(tmp_path) as log:
        seen = json.loads(read_text(log, done.output_hash))
    assert done.fingerprint == job.fingerprint == fingerprint_of(fields)
    assert fields["argv"][3:] == seen["argv"] == ["fast"] and fields["stdin"] == seen["stdin"] == "do it"
    assert fields["env"] == seen["env"]


async def test_an_anthropic_fingerprint_is_made_of_the_body_the_server_receives(tmp_path: Path) -> None:
    from engine.actors.targets.target_protocol import resolve_target
    from engine.runtime.plan import build_plan

    async with open_fake_openai() as server:
        spec_dict = definition(server.base_url, variants=1)
        target = {"kind": "anthropic", "base_url": server.base_url, "model": "claude", "max_retries": 0}
        spec_dict["target"] = {**target, "headers": {"anthropic-beta": "x"}}
        spec_dict["variants"][0]["system"] = "be brief"
        await run(tmp_path, spec_dict, "one")
        received = {r.body["messages"][-1]["content"]: r for r in server.requests}
    spec = spec_from_dict(spec_dict)
    plan = build_plan(spec, "one", list(spec.variants), lambda key: "")
    logged = {e.case: e.fingerprint for e in completed(tmp_path, "one")}
    for case in spec.cases:
        job = plan.make_job(spec.variants[0], case, 0)
        fields = request_fields(resolve_target(spec.target, spec.variants[0]), job.request)
        sent = received[case.prompt]
        assert fields["body"] == sent.body and sent.path.endswith("/messages")
        assert fields["url"] == server.base_url + "/messages"
        assert (
            fields["headers"] == {"anthropic-beta": "x"} == {"anthropic-beta": sent.headers["anthropic-beta"]}
        )
        assert fingerprint_of(fields) == job.fingerprint == logged[case.id]


def test_an_edited_agent_script_is_another_subject(tmp_path: Path) -> None:
    """The agent's own script is in the fingerprint (docs/reuse.md `scripts`): an edit is sent again,
    and an unchanged one is reused, in the same long-lived store."""
    agent = tmp_path / "agent.sh"
    agent.write_text("#!/bin/sh\necho v1\n")
    agent.chmod(0o755)
    (tmp_path / "e.toml").write_text(
        'name = "scripted"\n[target]\nkind = "command"\ncommand = ["./agent.sh"]\n'
        '[[cases]]\nid = "c"\nprompt = "p"\nexpected = "v"\n'
    )
    run_engine("run", "e.toml", "-q", "--store", "s", "--run-id", "first", cwd=tmp_path)
    same = run_engine("plan", "e.toml", "--store", "s", "--reuse", cwd=tmp_path)
    assert same.stdout.decode().splitlines()[0] == "1 trials: 1 reused, 0 to send"
    agent.write_text("#!/bin/sh\necho v2\n")
    edited = run_engine("plan", "e.toml", "--store", "s", "--reuse", cwd=tmp_path)
    assert edited.stdout.decode().splitlines()[0] == "1 trials: 0 reused, 1 to send"
    done = run_engine("run", "e.toml", "-q", "--store", "s", "--run-id", "second", "--reuse", cwd=tmp_path)
    assert done.returncode == 0, done.stderr.decode()
    from engine.store.blobs import read_text

    done_events = completed(tmp_path / "s", "second")
    with open_event_log(tmp_path / "s") as log:
        outputs = [read_text(log, e.output_hash).strip() for e in done_events]
    assert outputs == ["v2"]


def test_the_sandbox_policy_is_in_the_fingerprint() -> None:
    from engine.actors.targets.fingerprint import request_fingerprint
    from engine.actors.targets.target_protocol import resolve_target
    from engine.runtime.plan import build_plan

    def fingerprint(network: str) -> str:
        spec = spec_from_dict({
            "name": "boxed", "target": {"kind": "command", "command": ["cat"], "sandbox": "bubblewrap",
                                        "network": network},
            "variants": [{"name": "a"}],
            "cases": [{"id": "c", "prompt": "p", "expected": "p"}],
        })  # fmt: skip
        plan = build_plan(spec, "r", list(spec.variants), lambda key: "")
        job = plan.make_job(spec.variants[0], spec.cases[0], 0)
        target = resolve_target(spec.target, spec.variants[0])
        assert job.fingerprint == request_fingerprint(target, job.request)
        return job.fingerprint

    assert fingerprint("none") != fingerprint("host")
